// Bundles the extension host code, the webview page and (with --tests) the unit tests.
import * as esbuild from 'esbuild';
import { copyFile, mkdir, readdir } from 'node:fs/promises';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

if (tests) {
  const entries = (await readdir('test')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  // `vscode` is replaced by a stand-in; vscode-jsonrpc stays a runtime import from node_modules.
  await esbuild.build({ ...common, entryPoints: entries, outdir: 'out/test', platform: 'node', format: 'esm',
    outExtension: { '.js': '.mjs' }, sourcemap: 'inline', minify: false,
    alias: { vscode: './test/support/vscode.ts' }, external: ['vscode-jsonrpc', 'vscode-jsonrpc/*'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
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
