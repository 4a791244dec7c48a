// Writes docs/api-reference.md from the protos (comments included) and the role table.
// Usage: node .ci/api-reference.mjs [--check]   (--check fails when the file is stale)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "docs", "api-reference.md");
const tmp = mkdtempSync(join(tmpdir(), "api-ref-"));
const imageFile = join(tmp, "image.json");
execFileSync(join(root, "node_modules", ".bin", "buf"), ["build", "-o", imageFile], { cwd: root });
const image = JSON.parse(readFileSync(imageFile, "utf8"));
rmSync(tmp, { recursive: true, force: true });

const roles = new Map(
  [
    ...readFileSync(join(root, "control", "admin", "auth.ts"), "utf8").matchAll(
      /"([\w.]+\/\w+)": "(viewer|operator)"/g,
    ),
  ].map((m) => [m[1], m[2]]),
);
const scalar = (field) =>
  field.type && field.type !== "TYPE_MESSAGE" && field.type !== "TYPE_ENUM"
    ? field.type.replace(/^TYPE_/, "").toLowerCase()
    : undefined;

function comments(file) {
  const byPath = new Map();
  for (const loc of file.sourceCodeInfo?.location ?? []) {
    if (loc.leadingComments)
      byPath.set((loc.path ?? []).join("."), loc.leadingComments.trim().replace(/\s*\n\s*/g, " "));
  }
  return (path) => byPath.get(path.join(".")) ?? "";
}
const short = (name) =>
  name
    .replace(/^\.agentcontrol\.(admin\.)?v1\./, "")
    .replace(/^\.google\.protobuf\./, "google.protobuf.");
function fieldType(field, messages) {
  const base = scalar(field) ?? short(field.typeName ?? "?");
  const entry = field.typeName && messages.get(field.typeName);
  if (entry?.options?.mapEntry) {
    const [k, v] = entry.field;
    return `map<${scalar(k) ?? short(k.typeName)}, ${scalar(v) ?? short(v.typeName)}>`;
  }
  const repeated = field.label === "LABEL_REPEATED" || field.label === 3 ? "repeated " : "";
  const optional = field.proto3Optional ? "optional " : "";
  return `${repeated}${optional}${base}`;
}

const lines = [
  "# Admin and Agent API reference",
  "",
  "Generated from `proto/` by `node .ci/api-reference.mjs`; do not edit by hand. Every RPC is reachable",
  "with the Connect protocol (plain JSON or binary over HTTP/1.1 — `curl` works), gRPC-Web, and gRPC (HTTP/2)",
  "on the admin port. Send `authorization: Bearer <token>`; the role column is the least role allowed.",
  "",
  "Example: `curl -s -H \"authorization: Bearer $(cat .data/admin-token)\" -H 'content-type: application/json' -d '{}' http://127.0.0.1:7080/agentcontrol.admin.v1.NodeService/ListNodes`",
  "",
];
const files = image.file
  .filter((f) => f.name.startsWith("agentcontrol/"))
  .sort((a, b) => a.name.localeCompare(b.name));
const messages = new Map();
for (const file of image.file) {
  const visit = (prefix, list) => {
    for (const m of list ?? []) {
      messages.set(`${prefix}.${m.name}`, m);
      visit(`${prefix}.${m.name}`, m.nestedType);
    }
  };
  visit(`.${file.package}`, file.messageType);
}
for (const file of files) {
  const comment = comments(file);
  lines.push(`## ${file.name}`, "");
  (file.service ?? []).forEach((service, si) => {
    lines.push(
      `### service ${file.package}.${service.name}`,
      "",
      comment([6, si]),
      "",
      "| RPC | request → response | role | what it does |",
      "| --- | --- | --- | --- |",
    );
    (service.method ?? []).forEach((method, mi) => {
      const role =
        roles.get(`${file.package}.${service.name}/${method.name}`) ??
        (file.package.includes("admin") ? "none" : "agent credential");
      const stream = `${method.clientStreaming ? "stream " : ""}${short(method.inputType)} → ${method.serverStreaming ? "stream " : ""}${short(method.outputType)}`;
      lines.push(`| \`${method.name}\` | ${stream} | ${role} | ${comment([6, si, 2, mi])} |`);
    });
    lines.push("");
  });
  (file.enumType ?? []).forEach((en, ei) => {
    lines.push(
      `### enum ${en.name}`,
      "",
      comment([5, ei]),
      "",
      en.value.map((v, vi) => `- \`${v.name}\` ${comment([5, ei, 2, vi])}`.trimEnd()).join("\n"),
      "",
    );
  });
  (file.messageType ?? []).forEach((message, mi) => {
    lines.push(`### message ${message.name}`, "");
    const text = comment([4, mi]);
    if (text) lines.push(text, "");
    if ((message.field ?? []).length === 0) {
      lines.push("(no fields)", "");
      return;
    }
    lines.push("| field | type | meaning |", "| --- | --- | --- |");
    message.field.forEach((field, fi) => {
      lines.push(
        `| \`${field.name}\` | ${fieldType(field, messages)} | ${comment([4, mi, 2, fi])} |`,
      );
    });
    lines.push("");
  });
}
const text = `${lines
  .join("\n")
  .replace(/\n{3,}/g, "\n\n")
  .trimEnd()}\n`;
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(out, "utf8");
  } catch {}
  if (current !== text) {
    console.error("docs/api-reference.md is stale: run 'npm run docs:api' and commit the result");
    process.exit(1);
  }
  console.log("API reference is fresh");
} else {
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}
