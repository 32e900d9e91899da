// Bundle the editor (CodeMirror 6 + Python mode) into one minified ES module for the web app.
// Run with `npm ci && npm run build` in this folder; the output is committed so running qkv needs no Node.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = path.join(here, "..", "src", "qkv", "web", "static", "vendor", "editor.js");

await build({
  entryPoints: [path.join(here, "src", "editor.js")],
  outfile,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  legalComments: "eof",
  logLevel: "info",
});
