/**
 * @packageDocumentation
 * (design note: see below, filled in at the end)
 */
export * from "./assert-never.js";
export * from "./batch-rules.js";
export { commandError } from "./commands.js";
export * from "./create.js";
export * from "./decide.js";
export * from "./model.js";
export * from "./operation-id.js";
export * from "./plan.js";
export * from "./retry.js";
export * from "./spec.js";
