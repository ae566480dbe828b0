// Every command id the extension hands to VS Code (tree items, code lenses, the status item,
// executeCommand, package.json menus and keybindings) is registered in activate and
// contributed in package.json: else VS Code shows "command '…' not found" when it is run; and a
// tree row's command takes no arguments of ours along (the extension host caches those per
// refresh: a click during one showed "Actual command not found, wanted to execute …").
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AgentTree } from '../src/agents/tree';
import { BranchTree } from '../src/branches/tree';
import { CheckpointTree } from '../src/checkpoints/tree';
import { clicked, registerCommands, type Parts } from '../src/commands';
import { ui } from './support/vscode';

const root = fileURLToPath(new URL('../..', import.meta.url)); // out/test -> the extension
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
    keybindings: { command: string }[];
    views: Record<string, { id: string; type?: string; visibility?: string }[]>;
  };
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('wire.ts') ? [path] : [];
  });
}

/** Command ids the code attaches or runs: `command: '…'`, `.command = … '…'`, `executeCommand('…'`. */
function usedIds(): Map<string, string> {
  const used = new Map<string, string>(); // id -> where
  for (const file of sources(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const spots = [
      ...text.matchAll(/executeCommand(?:<[^>]*>)?\(\s*'([^']+)'/g),
      ...[...text.matchAll(/\bcommand\s*[:=]\s*([^;\n]+)/g)].flatMap((m) =>
        [...m[1].matchAll(/'(openprogram\.[\w.]+)'/g)].map((x) => Object.assign(x, { index: m.index }))),
    ];
    for (const m of spots) {
      if (!m[1].startsWith('openprogram.')) continue; // VS Code's own (vscode.diff, workbench...)
      const line = text.slice(0, m.index).split('\n').length;
      used.set(m[1], `${file.slice(root.length)}:${line}`);
    }
  }
  return used;
}

test('the chat owns the side bar: the other OpenProgram views start collapsed', () => {
  const views = pkg.contributes.views.openprogram;
  assert.equal(views[0].id, 'openprogram.chat');
  assert.equal(views[0].visibility, undefined, 'the chat starts open');
  const others = views.slice(1);
  assert.deepEqual(others.map((v) => v.id).sort(), ['openprogram.agents', 'openprogram.branches', 'openprogram.checkpoints']);
  for (const v of others) assert.equal(v.visibility, 'collapsed', `${v.id} starts expanded and squeezes the chat`);
  // the message log keeps a usable height however the side parts grow
  const css = readFileSync(join(root, 'media', 'webview.css'), 'utf8');
  assert.match(css, /#app > #log \{[^}]*min-height: max\(9\.5em, min\(16em, 40vh\)\)/);
  assert.match(css, /#app \{[^}]*overflow-y: auto/);
});

test('the commands registered in activate are exactly the ones package.json contributes', () => {
  ui.registered.length = 0;
  registerCommands({} as Parts); // only registers; no handler runs
  const registered = [...ui.registered].sort();
  assert.equal(new Set(registered).size, registered.length, 'a command is registered twice');
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(registered, contributed);
});

test('every command id used in the code, the menus and the keybindings is registered', () => {
  ui.registered.length = 0;
  registerCommands({} as Parts);
  const registered = new Set(ui.registered);
  // VS Code registers `<view id>.focus` for each contributed view
  const views = Object.values(pkg.contributes.views).flat().map((v) => `${v.id}.focus`);
  const known = new Set([...registered, ...views]);
  const used = usedIds();
  assert.ok(used.has('openprogram.showCheckpointDiff') && used.has('openprogram.restoreHunk') && used.has('openprogram.focusChat'),
    `the scan finds the tree item, code lens and status item commands: ${[...used.keys()].join(', ')}`);
  const missing = [...used].filter(([id]) => !known.has(id)).map(([id, where]) => `${id} (${where})`);
  assert.deepEqual(missing, [], 'used but never registered');
  const menus = Object.entries(pkg.contributes.menus).flatMap(([menu, items]) => items.map((i) => ({ menu, id: i.command })));
  const keys = pkg.contributes.keybindings.map((k) => ({ menu: 'keybindings', id: k.command }));
  const unknown = [...menus, ...keys].filter((m) => !registered.has(m.id)).map((m) => `${m.id} (${m.menu})`);
  assert.deepEqual(unknown, [], 'in package.json menus or keybindings but never registered');
});

test("a tree row's command carries no arguments of ours (the extension host drops them at the next refresh)", () => {
  const client = {} as never;
  const current = (): string | null => 's1';
  const session = { id: 's1', title: 'One', status: 'idle', updatedAt: 'now' };
  const branch = { headId: 'h1', active: true, length: 2, preview: 'hi' };
  const cp = { id: 'c1', parentId: 'c0', createdAt: 'now', message: 'turn t1: edit', files: [{ path: 'a.py', status: 'modified' as const }], kind: 'turn' as const };
  const agent = { id: 'a1', sessionId: 's1', headId: 'h2', label: 'kid', status: 'done' as const, kind: 'agent' as const, createdAt: 'now' };
  const items = [
    ...[{ kind: 'session' as const, session }, { kind: 'turn' as const, checkpoint: cp }, { kind: 'file' as const, checkpoint: cp, file: cp.files[0] }]
      .map((n) => new CheckpointTree(client, current).getTreeItem(n)),
    ...[{ kind: 'session' as const, session }, { kind: 'branch' as const, sessionId: 's1', branch, all: [branch] }]
      .map((n) => new BranchTree(client, current).getTreeItem(n)),
    new AgentTree(client, current).getTreeItem({ kind: 'agent', agent }),
  ];
  const commands = items.map((i) => i.command).filter((c) => c !== undefined);
  assert.ok(commands.length >= 4, 'the rows have commands');
  for (const c of commands) {
    if (c.command.startsWith('openprogram.')) assert.equal(c.arguments, undefined, `${c.command} has arguments`);
    else assert.match(c.command, /^vscode\./, 'only VS Code API commands take arguments along');
  }
});

test('a row command waits, a bounded time, for the selection a refresh briefly empties', async () => {
  const view = { selection: [] as string[] };
  setTimeout(() => view.selection.push('row'), 60); // the refreshed rows come back
  assert.equal(await clicked(view as never, 2000), 'row');
  const empty = { selection: [] as string[] };
  const started = Date.now();
  assert.equal(await clicked(empty as never, 80), undefined, 'no row: nothing is done');
  assert.ok(Date.now() - started < 2000);
});
