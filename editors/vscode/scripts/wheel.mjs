// The server wheel the .vsix carries (server/openprogram_lsp-VERSION-*.whl), so the extension's
// "Install" offer installs its own version without a clone or a package index entry for it
// (src/install.ts installSource). Built from this checkout with pip; the Python is
// $OPENPROGRAM_PYTHON, else the checkout's .venv, else python3. Offline (no build isolation)
// when that Python has setuptools, else pip fetches the build backend. $OPENPROGRAM_WHEEL names a
// wheel already built from this checkout (the tests build one per run) to copy instead. The
// wheel's version must be the extension's: a mismatch fails the package step.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(ext, '..', '..');
const version = JSON.parse(readFileSync(join(ext, 'package.json'), 'utf8')).version;
const venvPython = join(repo, '.venv', 'bin', 'python');
const python = process.env.OPENPROGRAM_PYTHON || (existsSync(venvPython) ? venvPython : 'python3');

function fail(message) {
  process.stderr.write(`wheel.mjs: ${message}\n`);
  process.exit(1);
}

const out = join(ext, 'server');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
function build() {
  let offline = true;
  try {
    execFileSync(python, ['-c', 'import setuptools'], { stdio: 'ignore' });
  } catch {
    offline = false;
  }
  const args = ['-m', 'pip', 'wheel', '-q', '--no-deps', '--disable-pip-version-check', '-w', out];
  try {
    execFileSync(python, [...args, ...(offline ? ['--no-build-isolation'] : []), repo], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
  } catch (err) {
    fail(`building the server wheel with ${python} failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
}

const given = process.env.OPENPROGRAM_WHEEL;
if (given) {
  if (!existsSync(given)) fail(`OPENPROGRAM_WHEEL names no file: ${given}`);
  copyFileSync(given, join(out, basename(given)));
} else {
  build();
}
const wheels = readdirSync(out).filter((f) => f.endsWith('.whl'));
const expected = `openprogram_lsp-${version}-`;
if (wheels.length !== 1 || !wheels[0].startsWith(expected)) {
  fail(`expected one ${expected}*.whl (the extension's version ${version}), got: ${wheels.join(', ') || 'none'}`);
}
process.stdout.write(`server wheel: server/${wheels[0]}\n`);
