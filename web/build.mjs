// The web client's bundles, built from play/src by esbuild and committed, so that the service
// serves them without Node.js. `node build.mjs [OUTDIR]` writes them under another folder (the
// suite builds there and compares).

import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));
const outdir = process.argv[2] ?? root;

await build({
  entryPoints: {
    "play/play": `${root}play/src/main.ts`,
    // The match table for the replay viewer, with its stylesheet: /watch/assets/match-view.js.
    "watch/match-view": `${root}play/src/table/replay-entry.ts`,
  },
  outdir,
  bundle: true,
  format: "esm",
  minify: true,
  platform: "browser",
  target: "es2020",
  legalComments: "none",
  logLevel: "warning",
});
