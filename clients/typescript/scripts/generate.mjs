// src/schema.d.ts from the service's OpenAPI document, saved as a JSON file:
//   curl -fsS http://localhost:8080/v1/openapi.json > /tmp/openapi.json
//   npm run generate -- /tmp/openapi.json        (or OPENAPI_JSON=/tmp/openapi.json npm run generate)
// `node scripts/generate.mjs INPUT OUTFILE` writes elsewhere (the suite compares the two).

import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const given = process.argv[2] ?? process.env.OPENAPI_JSON;
const output = process.argv[3] ?? `${root}src/schema.d.ts`;
if (!given) {
  console.error("usage: npm run generate -- path/to/openapi.json (or set OPENAPI_JSON)");
  process.exit(2);
}
// A relative path is taken from where npm was run (INIT_CWD), not from this package.
const input = resolve(process.env.INIT_CWD ?? process.cwd(), given);
// Fields with a default stay optional in request bodies (--default-non-nullable false).
execFileSync(
  process.execPath,
  [
    `${root}node_modules/openapi-typescript/bin/cli.js`,
    input,
    "--default-non-nullable",
    "false",
    "--output",
    output,
  ],
  { stdio: ["ignore", "ignore", "inherit"] },
);
