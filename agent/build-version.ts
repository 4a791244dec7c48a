/**
 * The version this code was built as: `agent:build --version V` bakes it in with esbuild's
 * `define`; run from source it is undefined (the supervisor then builds an artifact).
 */
declare const AGENT_BUILD_VERSION: string | undefined;
declare const AGENT_BUILD_PLATFORM: string | undefined;

/** The version baked into this artifact, or undefined when running from source. */
export const BUILD_VERSION: string | undefined =
  typeof AGENT_BUILD_VERSION === "string" ? AGENT_BUILD_VERSION : undefined;

/** The platform the artifact was built for, or undefined when running from source. */
export const BUILD_PLATFORM: string | undefined =
  typeof AGENT_BUILD_PLATFORM === "string" ? AGENT_BUILD_PLATFORM : undefined;
