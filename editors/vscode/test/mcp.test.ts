// Unit tests for the MCP servers quick pick: rows, actions and the offer listing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionsFor, approvalMessage, offerLines, serverItem } from '../src/mcp';
import type { McpServerInfo } from '../src/protocol';

const server = (extra: Partial<McpServerInfo> = {}): McpServerInfo => ({
  name: 'notes',
  origin: 'workspace',
  transport: 'stdio',
  target: 'python notes.py',
  status: 'ready',
  trust: 'allow',
  restarts: 0,
  tools: [{ name: 'mcp__notes__read_note', tool: 'read_note', kind: 'read', description: 'Read a note.' }],
  prompts: [{ name: 'review', command: '/mcp__notes__review', description: 'Review.', arguments: ['code'] }],
  resources: [{ uri: 'note://readme', name: 'readme', mimeType: 'text/plain', reference: '@notes:note://readme' }],
  ...extra,
});

test('a row shows status, tool count, trust, origin, target and the last error', () => {
  const item = serverItem(server());
  assert.equal(item.label, '$(pass) notes');
  assert.equal(item.description, 'ready · 1 tool · trust allow');
  assert.equal(item.detail, 'workspace · stdio · python notes.py');
  const failed = serverItem(server({ status: 'failed', lastError: 'command not found: x', tools: [] }));
  assert.match(failed.detail, /command not found: x/);
  assert.match(failed.description, /0 tools/);
});

test('revoking trust is offered only for a .mcp.json server with an answer', () => {
  assert.deepEqual(actionsFor(server()).map((a) => a.action), ['restart', 'tools', 'revokeTrust']);
  assert.deepEqual(actionsFor(server({ origin: 'editor', trust: undefined })).map((a) => a.action), ['restart', 'tools']);
  assert.deepEqual(actionsFor(server({ tools: [], prompts: [], resources: [], trust: 'unknown' })).map((a) => a.action), ['restart']);
});

test('the offer lists tools, prompts as slash commands and resources as references', () => {
  assert.deepEqual(offerLines(server()), [
    'mcp__notes__read_note [read] Read a note.',
    '/mcp__notes__review code (prompt) Review.',
    '@notes:note://readme (resource)',
  ]);
});

test('a notification approval names the MCP server, tool and every argument', () => {
  const input = { name: 'a.txt', force: true };
  assert.equal(approvalMessage({ title: 'Write a.txt', name: 'write_file', input: {} }), 'OpenProgram: allow Write a.txt?');
  assert.equal(
    approvalMessage({ title: 'MCP notes: delete_note', name: 'mcp__notes__delete_note', input, mcp: { server: 'notes', tool: 'delete_note' } }),
    'OpenProgram: allow MCP server notes, tool delete_note, with arguments {"name":"a.txt","force":true}?',
  );
  assert.equal(
    approvalMessage({ title: 'MCP notes: delete_note', name: 'mcp__notes__delete_note', input, mcp: { server: 'notes', tool: 'delete_note', description: 'Delete a note.' } }),
    'OpenProgram: allow MCP server notes, tool delete_note (the server says: Delete a note.), with arguments {"name":"a.txt","force":true}?',
  );
});
