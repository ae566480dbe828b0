// Bundles the extension host code, the webview page and (with --tests) the unit tests.
import * as esbuild from 'esbuild';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

if (tests) {
  const names = (await readdir('test')).filter((f) => f.endsWith('.test.ts'));
  // The files that start a real server each run in their own process, side by side (node's test
  // runner: `npm test`); the others share one process (out/test/unit.test.mjs imports their
  // bundles from out/unit/, where the runner does not look): 14 node starts fewer.
  const real = new Set();
  for (const f of names) if ((await readFile(`test/${f}`, 'utf8')).includes("from './support/agent'")) real.add(f);
  await Promise.all(['out/test', 'out/unit'].map((d) => rm(d, { recursive: true, force: true })));
  // `vscode` is replaced by a stand-in; vscode-jsonrpc stays a runtime import from node_modules.
  const options = { ...common, platform: 'node', format: 'esm', outExtension: { '.js': '.mjs' }, sourcemap: 'inline',
    minify: false, alias: { vscode: './test/support/vscode.ts' }, external: ['vscode-jsonrpc', 'vscode-jsonrpc/*'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } };
  const unit = names.filter((f) => !real.has(f));
  await Promise.all([
    esbuild.build({ ...options, entryPoints: [...real].map((f) => `test/${f}`), outdir: 'out/test' }),
    esbuild.build({ ...options, entryPoints: unit.map((f) => `test/${f}`), outdir: 'out/unit' }),
  ]);
  await writeFile('out/test/unit.test.mjs', unit.map((f) => `import '../unit/${f.replace(/\.ts$/, '.mjs')}';\n`).join(''));
} else {
  await mkdir('dist', { recursive: true });
  await Promise.all([
    esbuild.build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node',
      format: 'cjs', target: 'node20', external: ['vscode'] }),
    esbuild.build({ ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser',
      format: 'iife', target: 'es2022' }),
    copyFile('media/webview.css', 'dist/webview.css'),
  ]);
}
