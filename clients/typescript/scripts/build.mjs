// The bundle, dist/cryptid-client.js: ESM, minified, for browsers (and Node 20), ES2020.
// `node scripts/build.mjs [OUTFILE]` writes it elsewhere (the suite compares the two).

import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const outfile = process.argv[2] ?? `${root}dist/cryptid-client.js`;

await build({
  entryPoints: [`${root}src/index.ts`],
  bundle: true,
  format: "esm",
  minify: true,
  platform: "browser",
  target: "es2020",
  legalComments: "none",
  outfile,
  logLevel: "warning",
});
