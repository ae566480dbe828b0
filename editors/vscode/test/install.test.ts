// Finding the server (PATH, uv, pipx, the extension's storage), the install offer, a real
// install from a local wheel into a temporary storage, and the version note.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  candidateDirs,
  findServer,
  INSTALL,
  installServer,
  installSource,
  installSteps,
  offerInstall,
  OPEN_SETTINGS,
  parseVersion,
  storageVenv,
  versionNote,
  type OfferHost,
} from '../src/install';
import { statusView } from '../src/status';
import { initialState } from '../src/webview/state';

const HOME = '/home/u';

function only(...files: string[]): (f: string) => boolean {
  return (f) => files.includes(f);
}

test('the server on PATH comes first', () => {
  const env = { PATH: '/usr/bin:/opt/op/bin' };
  const exists = only('/opt/op/bin/openprogram-lsp', '/home/u/.local/bin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', exists), '/opt/op/bin/openprogram-lsp');
});

test('off PATH: the uv and pipx bin dirs, then their venvs, then the extension storage', () => {
  const env = { PATH: '/usr/bin' };
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', only('/home/u/.local/bin/openprogram-lsp', '/s/server/bin/openprogram-lsp')), '/home/u/.local/bin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', { ...env, UV_TOOL_BIN_DIR: '/uvbin' }, HOME, '/s', only('/uvbin/openprogram-lsp')), '/uvbin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', { ...env, PIPX_BIN_DIR: '/px' }, HOME, '/s', only('/px/openprogram-lsp')), '/px/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', only('/home/u/.local/share/uv/tools/openprogram-lsp/bin/openprogram-lsp')), '/home/u/.local/share/uv/tools/openprogram-lsp/bin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', only('/home/u/.local/share/pipx/venvs/openprogram-lsp/bin/openprogram-lsp')), '/home/u/.local/share/pipx/venvs/openprogram-lsp/bin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', only('/s/server/bin/openprogram-lsp')), '/s/server/bin/openprogram-lsp');
  assert.equal(findServer('openprogram-lsp', env, HOME, '/s', only()), undefined);
  const dirs = candidateDirs({ PATH: 'relative:/usr/bin', XDG_DATA_HOME: '/d' }, HOME, '/s');
  assert.ok(!dirs.includes('relative'), 'a relative PATH entry is never searched');
  assert.ok(dirs.includes('/d/uv/tools/openprogram-lsp/bin') && dirs.includes('/d/pipx/venvs/openprogram-lsp/bin'));
});

test('a path in server.command is used as given; another bare name only on PATH', () => {
  assert.equal(findServer('/x/my-lsp', { PATH: '' }, HOME, '/s', only()), '/x/my-lsp');
  assert.equal(findServer('my-lsp', { PATH: '/usr/bin' }, HOME, '/s', only('/home/u/.local/bin/my-lsp')), undefined);
  assert.equal(findServer('my-lsp', { PATH: '/usr/bin' }, HOME, '/s', only('/usr/bin/my-lsp')), '/usr/bin/my-lsp');
});

test('the install source: a bundled wheel of this version, else the pinned requirement', () => {
  const listing = (dir: string) => (dir === '/ext/server' ? ['openprogram_lsp-0.2.0-py3-none-any.whl', 'openprogram_lsp-0.1.0-py3-none-any.whl'] : []);
  assert.equal(installSource('/ext', '0.1.0', listing), '/ext/server/openprogram_lsp-0.1.0-py3-none-any.whl');
  assert.equal(installSource('/ext', '0.3.0', listing), 'openprogram-lsp==0.3.0');
  assert.deepEqual(installSteps('/s', 'openprogram-lsp==0.3.0'), [
    ['python3', '-m', 'venv', '--clear', '/s/server'],
    ['/s/server/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', 'openprogram-lsp==0.3.0'],
  ]);
});

function host(answer: string | undefined, install: () => Promise<string>) {
  const seen: string[] = [];
  const h: OfferHost = {
    ask: (message, items) => {
      seen.push(`ask ${message} [${items.join(', ')}]`);
      return Promise.resolve(answer);
    },
    install: () => {
      seen.push('install');
      return install();
    },
    openSettings: () => seen.push('settings'),
    restart: () => seen.push('restart'),
    fail: (m) => seen.push(`fail ${m}`),
  };
  return { h, seen };
}

test('the offer: Install installs and restarts; a failure is one line; Open Settings; dismissed', async () => {
  let r = host(INSTALL, () => Promise.resolve('/s/server/bin/openprogram-lsp'));
  assert.equal(await offerInstall('0.1.0', r.h), 'installed');
  assert.match(r.seen[0], /openprogram-lsp was not found on PATH or in a uv\/pipx install\. Install version 0\.1\.0 .*\[Install, Open Settings\]/);
  assert.deepEqual(r.seen.slice(1), ['install', 'restart']);
  r = host(INSTALL, () => Promise.reject(new Error('pip install failed: No matching distribution found for openprogram-lsp==0.1.0')));
  assert.equal(await offerInstall('0.1.0', r.h), 'failed');
  assert.deepEqual(r.seen.slice(1), ['install', 'fail OpenProgram: installing openprogram-lsp 0.1.0 failed: pip install failed: No matching distribution found for openprogram-lsp==0.1.0']);
  r = host(OPEN_SETTINGS, () => Promise.reject(new Error('not run')));
  assert.equal(await offerInstall('0.1.0', r.h), 'settings');
  assert.deepEqual(r.seen.slice(1), ['settings']);
  r = host(undefined, () => Promise.reject(new Error('not run')));
  assert.equal(await offerInstall('0.1.0', r.h), 'dismissed');
  assert.equal(r.seen.length, 1);
});

test('a failing step rejects with its last line and nothing else runs', async () => {
  const storage = mkdtempSync(path.join(tmpdir(), 'op-install-'));
  try {
    await assert.rejects(
      installServer(storage, [['/bin/sh', '-c', 'echo noise >&2; echo "No module named venv" >&2; exit 1'], ['/bin/sh', '-c', `touch ${storage}/ran`]]),
      /sh failed: No module named venv$/,
    );
    assert.deepEqual(readdirSync(storage), []);
    await assert.rejects(installServer(storage, [['/nonexistent/python3', '-m', 'venv', storage]]), /python3 venv failed: \/nonexistent\/python3 was not found/);
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

// The harness (tests/editors/test_vscode_unit.py) builds the wheel offline and names it and the
// test venv's site-packages; pip installs the wheel alone (--no-index --no-deps) and the
// dependencies come from that site-packages through a .pth file.
const wheel = process.env.OPENPROGRAM_TEST_WHEEL;
const site = process.env.OPENPROGRAM_TEST_SITE;
test('a real install from a local wheel into the storage, found and run', { skip: !(wheel && site) && 'OPENPROGRAM_TEST_WHEEL/SITE not set (the pytest harness sets them)', timeout: 240_000 }, async () => {
  const storage = mkdtempSync(path.join(tmpdir(), 'op-storage-'));
  try {
    const steps = installSteps(storage, wheel!, 'python3', ['--no-index', '--no-deps']);
    const exe = await installServer(storage, steps);
    assert.equal(exe, path.join(storage, 'server', 'bin', 'openprogram-lsp'));
    const lib = path.join(storageVenv(storage), 'lib');
    const pyDir = readdirSync(lib).find((d) => d.startsWith('python'))!;
    writeFileSync(path.join(lib, pyDir, 'site-packages', 'test-deps.pth'), `${site}\n`);
    assert.equal(findServer('openprogram-lsp', { PATH: '/nonexistent' }, '/nonexistent-home', storage), exe);
    const out = execFileSync(exe, ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: storage } });
    const version = parseVersion(out);
    assert.equal(versionNote(version, '0.1.0').matches, true, out);
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

test('the version note and the status item say whether the server matches', () => {
  assert.equal(parseVersion('openprogram-lsp 0.1.0\n'), '0.1.0');
  assert.equal(parseVersion('openprogram-lsp 1.2.3rc1'), '1.2.3rc1');
  assert.equal(parseVersion(''), undefined);
  assert.deepEqual(versionNote('0.1.0', '0.1.0'), { text: "server 0.1.0, the extension's version", matches: true });
  const off = versionNote('0.0.9', '0.1.0');
  assert.equal(off.matches, false);
  assert.match(off.text, /server 0\.0\.9 does not match the extension \(0\.1\.0\): install openprogram-lsp 0\.1\.0/);
  const ok = statusView('running', undefined, initialState(), versionNote('0.1.0', '0.1.0'));
  assert.match(ok.tooltip, /Server 0\.1\.0, the extension's version\./);
  assert.equal(ok.alert, false);
  const bad = statusView('running', undefined, initialState(), off);
  assert.match(bad.tooltip, /Server 0\.0\.9 does not match the extension/);
  assert.ok(bad.text.includes('$(warning)') && bad.alert);
});
