/** Every command the extension contributes, wired to the controller, trees and client. */
import { branchLabel, sessionTitle } from './branches/label';
import { watchSession } from './watch';
import type { AgentNode, AgentTree } from './agents/tree';
import type { AgentClient } from './client';
import type { BranchNode, BranchTree } from './branches/tree';
import type { ChatController } from './chat/controller';
import type { ChatViewProvider } from './chat/view';
import { changes, type BranchDiffContent } from './branches/diff';
import { checkpointUri, type CheckpointContentProvider } from './checkpoints/content';
import { checkpointLabel, diffTitle, type CheckpointNode, type CheckpointTree } from './checkpoints/tree';
import { actionsFor, offerLines, serverItem } from './mcp';
import { Requests, type BranchDiffResult, type BranchInfo, type Checkpoint, type McpResult, type McpServerInfo, type RestoreResult, type SessionInfo } from './protocol';
import { hunkUnderCursor, type HunkRef } from './checkpoints/hunks';
import { nextToUndo, notRestoredNote } from './checkpoints/undo';
import { traceError } from './log';
import { listRules, removeSettingsRule, revokeRule, ruleItems } from './rules';
import { PERMISSION_MODES } from './settings';
import * as api from './vscodeapi';

const UNDO_KEY = 'openprogram.lastSafetyCheckpointId';

export interface Parts {
  client: AgentClient;
  controller: ChatController;
  chatView: ChatViewProvider;
  checkpoints: CheckpointTree;
  branches: BranchTree;
  agents: AgentTree;
  content: CheckpointContentProvider;
  branchContent: BranchDiffContent;
  memento: api.Memento;
  output: api.LogOutputChannel;
  /** The tree views, whose selection says which row a click chose. */
  views: { branches: api.TreeView<BranchNode>; agents: api.TreeView<AgentNode> };
}

/** How long a click waits for its row while the tree refreshes under it. */
const CLICK_WAIT_MS = 3000;

/**
 * The row a click chose: the view's selection. A row's command carries no arguments (the
 * extension host keeps those only until the tree's next refresh, so a click landing during one
 * failed with "Actual command not found"); while a refresh is re-fetching the rows the
 * selection is empty for a moment, so it is waited for, a bounded time.
 */
export async function clicked<T>(view: api.TreeView<T>, waitMs = CLICK_WAIT_MS): Promise<T | undefined> {
  const deadline = Date.now() + waitMs;
  while (view.selection.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return view.selection[0];
}

function isHunkRef(x: unknown): x is HunkRef {
  const r = x as Partial<HunkRef> | null | undefined;
  return !!r && typeof r.checkpointId === 'string' && typeof r.path === 'string' && Number.isInteger(r.hunk);
}

/** Run a command body, showing failures as an error notification (the result then is undefined). */
function guarded<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): (...args: A) => Promise<unknown> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      traceError(message);
      void api.showError(`OpenProgram: ${message}`);
      return undefined;
    }
  };
}

/** Register all commands; returns their disposables. */
export function registerCommands(p: Parts): api.Disposable[] {
  const refreshTrees = (): void => {
    p.checkpoints.refresh();
    p.branches.refresh();
    p.agents.refresh();
  };

  const restore = async (checkpointId: string, paths: string[] | undefined, what: string): Promise<void> => {
    const params = paths ? { checkpointId, paths } : { checkpointId };
    await remembered(await p.client.request<RestoreResult>(Requests.restore, params), what);
  };

  /** After a restore: remember its safety checkpoint (Undo Restore) and say what happened. */
  const remembered = async (res: RestoreResult, what: string): Promise<void> => {
    await p.memento.update(UNDO_KEY, { checkpointId: res.safetyCheckpointId, paths: res.restored });
    void api.setContext('openprogram.canUndoRestore', true);
    refreshTrees();
    const n = res.restored.length;
    const left = notRestoredNote(res);
    const text = `OpenProgram: ${what}: ${n} file${n === 1 ? '' : 's'} restored.${left}`;
    const show = left ? api.showWarning : api.showInfo;
    void show(text, 'Undo Restore').then((pick) => {
      if (pick === 'Undo Restore') void api.executeCommand('openprogram.undoRestore');
    });
  };

  const pickCheckpoint = async (): Promise<Checkpoint | undefined> => {
    const sessionId = p.controller.state.sessionId;
    const { checkpoints } = await p.client.request<{ checkpoints: Checkpoint[] }>(
      Requests.checkpoints,
      sessionId ? { sessionId } : {},
    );
    const items = checkpoints
      .filter((cp) => cp.files.length > 0)
      .map((cp) => ({ label: checkpointLabel(cp), description: `${cp.files.length} files · ${cp.createdAt}`, cp }));
    return (await api.showQuickPick(items, { placeHolder: 'Choose a checkpoint' }))?.cp;
  };

  const asCheckpoint = async (arg: unknown): Promise<Checkpoint | undefined> => {
    const node = arg as CheckpointNode | { checkpointId?: string } | undefined;
    if (node && 'kind' in node && (node.kind === 'turn' || node.kind === 'file')) return node.checkpoint;
    if (node && 'checkpointId' in node && node.checkpointId) {
      const { checkpoints } = await p.client.request<{ checkpoints: Checkpoint[] }>(Requests.checkpoints, {});
      return checkpoints.find((c) => c.id === node.checkpointId);
    }
    return pickCheckpoint();
  };

  const showDiff = async (arg?: unknown): Promise<void> => {
    const node = arg as CheckpointNode | undefined;
    const cp = await asCheckpoint(arg);
    if (!cp) return;
    const files = node && node.kind === 'file' ? [node.file] : cp.files;
    const sides = (path: string) =>
      [checkpointUri({ checkpointId: cp.id, path, side: 'before' }), checkpointUri({ checkpointId: cp.id, path, side: 'after' })] as const;
    if (files.length === 1) {
      const [before, after] = sides(files[0].path);
      await api.openDiff(before, after, diffTitle(cp, files[0].path));
      return;
    }
    const picked = await api.showQuickPick(
      files.map((f) => ({ label: f.path, description: f.status })),
      { placeHolder: `Files changed by ${checkpointLabel(cp)}` },
    );
    if (picked) {
      const [before, after] = sides(picked.label);
      await api.openDiff(before, after, diffTitle(cp, picked.label));
    }
  };

  const pickSession = async (live = false): Promise<string | undefined> => {
    const { sessions } = await p.client.request<{ sessions: SessionInfo[] }>(Requests.sessions, {});
    // To watch: sessions with a running turn first (another editor is driving them).
    const order = live ? [...sessions].sort((a, b) => Number(b.status === 'running') - Number(a.status === 'running')) : sessions;
    const pick = await api.showQuickPick(
      order.map((s) => ({
        label: `${live && s.status === 'running' ? '$(pulse) ' : ''}${sessionTitle(s)}`,
        description: live && s.status === 'running' ? `running · ${s.updatedAt}` : s.updatedAt,
        id: s.id,
      })),
      { placeHolder: live ? 'Watch a session (running ones first)' : 'Open a session' },
    );
    return pick?.id;
  };

  /** The newest turn of the panel's session not undone yet (what Undo This Turn undoes). */
  const newestTurn = async (): Promise<Checkpoint | undefined> => {
    const sessionId = p.controller.state.sessionId;
    const { checkpoints } = await p.client.request<{ checkpoints: Checkpoint[] }>(Requests.checkpoints, sessionId ? { sessionId } : {});
    const cp = nextToUndo(checkpoints);
    if (!cp) void api.showInfo('OpenProgram: there is no turn with file changes left to undo.');
    return cp;
  };

  /** Switch to a branch: the tree's row, else a pick among the panel session's branches. */
  const switchBranch = async (node?: BranchNode): Promise<void> => {
    if (node && node.kind === 'branch') {
      if (node.sessionId !== p.controller.state.sessionId) await p.controller.loadSession(node.sessionId);
      await p.controller.checkout(node.branch.headId, node.sessionId);
    } else {
      const branches = await p.controller.refreshBranches();
      if (branches.length === 0) {
        void api.showInfo('OpenProgram: this session has no branches yet.');
        return;
      }
      const pick = await api.showQuickPick(
        branches.map((b) => ({
          label: `${b.active ? '$(check) ' : ''}${branchLabel(b, branches)}`,
          description: `${b.length} msgs · ${b.preview}`,
          headId: b.headId,
        })),
        { placeHolder: 'Switch to branch' },
      );
      if (pick) await p.controller.checkout(pick.headId);
    }
    p.branches.refresh();
    p.chatView.reveal();
  };

  /** Show a session in the chat: the tree's row, else a pick. */
  const openSession = async (node?: BranchNode): Promise<void> => {
    const id = node && node.kind === 'session' ? node.session.id : await pickSession();
    if (!id) return;
    await p.controller.loadSession(id);
    refreshTrees();
    p.chatView.reveal();
  };

  /** Check out a subagent's branch: the chat then shows it, and the next message continues it. */
  const openAgent = async (node?: AgentNode): Promise<void> => {
    const headId = node?.agent.headId;
    if (!node || !headId) return;
    await p.controller.checkout(headId, node.agent.sessionId, false); // viewing it moves no files
    refreshTrees();
    p.chatView.reveal();
  };

  const cmd = (id: string, fn: (...args: any[]) => Promise<unknown>): api.Disposable =>
    api.registerCommand(id, guarded(fn));

  const mcpServers = async (): Promise<void> => {
    const res = await p.client.request<McpResult>(Requests.mcp, {});
    for (const problem of res.problems) p.output.warn(problem);
    if (!res.servers.length) {
      void api.showInfo('OpenProgram: no MCP servers configured (openprogram.mcpServers, .mcp.json or the user config file).');
      return;
    }
    const picked = await api.showQuickPick(res.servers.map(serverItem), { placeHolder: 'MCP servers of this workspace' });
    if (!picked) return;
    const server: McpServerInfo = picked.server;
    const action = await api.showQuickPick(actionsFor(server), { placeHolder: server.name });
    if (!action) return;
    if (action.action === 'restart') {
      const done = await p.client.request<{ restarted: string[]; servers: McpServerInfo[] }>(Requests.mcpRestart, { server: server.name });
      const now = done.servers.find((s) => s.name === server.name);
      void api.showInfo(`OpenProgram: ${server.name} restarted: ${now ? serverItem(now).description : 'gone'}`);
    } else if (action.action === 'revokeTrust') {
      const done = await p.client.request<{ revoked: boolean }>(Requests.mcpRevokeTrust, { server: server.name });
      void api.showInfo(done.revoked ? `OpenProgram: trust in ${server.name} revoked; you are asked again before it starts.` : `OpenProgram: ${server.name} had no trust answer.`);
    } else {
      await api.showQuickPick(offerLines(server).map((label) => ({ label })), { placeHolder: `${server.name}: tools, prompts, resources` });
    }
  };

  return [
    cmd('openprogram.mcpServers', mcpServers),
    cmd('openprogram.attachImage', async () => {
      const images = await api.pickImages();
      if (images.length === 0) return;
      p.controller.addImages(images);
      p.chatView.reveal();
    }),
    cmd('openprogram.addSelection', async () => {
      if (p.controller.addSelection().length === 0) {
        void api.showInfo('OpenProgram: open a file and select the lines to attach.');
        return;
      }
      p.chatView.reveal();
    }),
    cmd('openprogram.addSymbol', async () => {
      const { label, reason } = await p.controller.addSymbol();
      if (reason) void api.showInfo(`OpenProgram: ${reason}`);
      if (label) p.chatView.reveal();
    }),
    cmd('openprogram.newSession', async () => {
      await p.controller.newSession();
      p.chatView.reveal();
    }),
    cmd('openprogram.send', async (text?: unknown) => {
      // a slash command typed here runs as it does in the panel's input
      if (typeof text === 'string') return p.controller.submit(text);
      if (p.controller.submitDraft()) return;
      const typed = await api.showInputBox({ prompt: 'Message OpenProgram', ignoreFocusOut: true });
      // The panel is not forced open: the reply streams there, and approvals come as notifications.
      if (typed) await p.controller.submit(typed);
    }),
    cmd('openprogram.cancel', () => p.controller.cancel()),
    cmd('openprogram.forkFromMessage', async (nodeId?: unknown) => {
      let from = typeof nodeId === 'string' ? nodeId : undefined;
      if (!from) {
        const items = p.controller.state.items
          .filter((it) => it.kind === 'message' && it.role === 'assistant' && it.nodeId)
          .map((it) => (it.kind === 'message' ? { label: it.text.slice(0, 80) || '(empty)', nodeId: it.nodeId! } : undefined))
          .filter((x): x is { label: string; nodeId: string } => x !== undefined);
        from = (await api.showQuickPick(items.reverse(), { placeHolder: 'Fork after which reply?' }))?.nodeId;
      }
      if (!from) return;
      const text = await api.showInputBox({ prompt: 'First message of the new branch', ignoreFocusOut: true });
      if (text) await p.controller.send(text, from);
    }),
    cmd('openprogram.switchBranch', (arg?: unknown) => switchBranch(arg as BranchNode | undefined)),
    cmd('openprogram.openSelectedBranch', async () => {
      const node = await clicked(p.views.branches);
      if (node?.kind === 'session') await openSession(node);
      else if (node?.kind === 'branch') await switchBranch(node);
    }),
    cmd('openprogram.branchDiff', async (arg?: unknown) => {
      const node = arg as BranchNode | undefined;
      const sessionId = node && node.kind === 'branch' ? node.sessionId : p.controller.state.sessionId;
      if (!sessionId) return;
      const { branches } = await p.client.request<{ branches: BranchInfo[] }>(Requests.branches, { sessionId });
      const active = branches.find((b) => b.active);
      let other = node && node.kind === 'branch' && !node.branch.active ? node.branch : undefined;
      if (!other) {
        const pick = await api.showQuickPick(
          branches.filter((b) => !b.active).map((b) => ({
            label: branchLabel(b, branches),
            description: `${b.length} msgs${b.codeDiffers ? ' · ≠ code' : ''} · ${b.preview}`,
            branch: b,
          })),
          { placeHolder: "Compare the active branch's code with" },
        );
        other = pick?.branch;
      }
      if (!active || !other) {
        if (!other && branches.length < 2) void api.showInfo('OpenProgram: this session has only one branch.');
        return;
      }
      const result = await p.client.request<BranchDiffResult>(Requests.branchDiff, {
        sessionId, fromHeadId: active.headId, toHeadId: other.headId,
      });
      if (result.files.length === 0) {
        void api.showInfo('OpenProgram: the two branches have the same code.');
        return;
      }
      const key = p.branchContent.put(result);
      const name = (b: BranchInfo): string => b.name || b.preview.slice(0, 30) || b.headId.slice(0, 8);
      await api.openChanges(`Branch code: ${name(active)} ↔ ${name(other)}`, changes(key, result));
    }),
    cmd('openprogram.undoSwitch', async () => {
      if (!(await p.controller.undoSwitch())) void api.showInfo('OpenProgram: no branch switch to undo.');
      refreshTrees();
    }),
    cmd('openprogram.openSession', (arg?: unknown) => openSession(arg as BranchNode | undefined)),
    cmd('openprogram.nameBranch', async (arg?: unknown) => {
      const node = arg as BranchNode | undefined;
      if (!node || node.kind !== 'branch') return;
      const name = await api.showInputBox({ prompt: 'Branch name', value: node.branch.name ?? '' });
      if (!name) return;
      await p.client.request(Requests.nameBranch, { sessionId: node.sessionId, headId: node.branch.headId, name });
      p.branches.refresh();
      await p.controller.refreshBranches();
    }),
    cmd('openprogram.showCheckpointDiff', showDiff),
    cmd('openprogram.restoreCheckpoint', async (arg?: unknown) => {
      const cp = await asCheckpoint(arg);
      if (!cp) return;
      if (!cp.parentId) throw new Error('this checkpoint has no parent to restore.');
      // Put the turn's files back as they were before the turn (its parent checkpoint).
      await restore(cp.parentId, cp.files.map((f) => f.path), `reverted “${checkpointLabel(cp)}”`);
    }),
    cmd('openprogram.undoTurn', async (arg?: unknown) => {
      const cp = arg ? await asCheckpoint(arg) : await newestTurn();
      if (!cp) return;
      // The server puts the files this turn changed back as they were before it, in one
      // restore with one safety checkpoint (Undo Restore brings the turn's changes back).
      const res = await p.client.request<RestoreResult>(Requests.restore, { checkpointId: cp.id, undo: true });
      await remembered(res, `undid “${checkpointLabel(cp)}”`);
      return res; // `/undo` in the chat says what it did
    }),
    cmd('openprogram.watchSession', async (arg?: unknown) => {
      const node = arg as BranchNode | undefined;
      const id = node && node.kind === 'session' ? node.session.id : await pickSession(true);
      if (!id) return;
      await watchSession(p, id);
      refreshTrees();
    }),
    cmd('openprogram.restoreCheckpointAfter', async (arg?: unknown) => {
      const cp = await asCheckpoint(arg);
      if (cp) await restore(cp.id, cp.files.map((f) => f.path), `restored “${checkpointLabel(cp)}”`);
    }),
    cmd('openprogram.restoreFile', async (arg?: unknown) => {
      const node = arg as CheckpointNode | undefined;
      if (!node || node.kind !== 'file') return;
      const cp = node.checkpoint;
      if (!cp.parentId) throw new Error('this checkpoint has no parent to restore.');
      await restore(cp.parentId, [node.file.path], `reverted ${node.file.path}`);
    }),
    cmd('openprogram.restoreHunk', async (arg?: unknown) => {
      const ref = isHunkRef(arg) ? arg : await hunkUnderCursor(p.content);
      if (!ref) {
        void api.showInfo('OpenProgram: put the cursor on a change in a checkpoint diff (its right side), or use the lens above the change.');
        return;
      }
      const res = await p.client.request<RestoreResult>(Requests.restoreHunk, ref);
      await remembered(res, `restored a hunk of ${ref.path}`);
    }),
    cmd('openprogram.undoRestore', async () => {
      const undo = p.memento.get<{ checkpointId: string; paths: string[] }>(UNDO_KEY);
      if (!undo) {
        void api.showInfo('OpenProgram: there is no restore to undo.');
        return;
      }
      await p.memento.update(UNDO_KEY, undefined);
      void api.setContext('openprogram.canUndoRestore', false);
      // Restore the safety checkpoint taken just before the restore, for the paths it touched.
      const params = undo.paths.length > 0 ? undo : { checkpointId: undo.checkpointId };
      const res = await p.client.request<RestoreResult>(Requests.restore, params);
      refreshTrees();
      void api.showInfo(`OpenProgram: restore undone (${res.restored.length} files).`);
    }),
    cmd('openprogram.refreshCheckpoints', async () => p.checkpoints.refresh()),
    cmd('openprogram.refreshBranches', async () => p.branches.refresh()),
    cmd('openprogram.refreshAgents', async () => p.agents.refresh()),
    cmd('openprogram.openAgent', (arg?: unknown) => openAgent(arg as AgentNode | undefined)),
    cmd('openprogram.openSelectedAgent', async () => openAgent(await clicked(p.views.agents))),
    cmd('openprogram.showRules', async () => {
      const rules = await listRules(p.client, p.controller.state.sessionId);
      if (rules.length === 0) {
        void api.showInfo('OpenProgram: no approval rules; every edit and command asks.');
        return;
      }
      const sessionId = p.controller.state.sessionId;
      const titles = new Map((p.controller.state.sessions?.list ?? []).map((s) => [s.id, sessionTitle(s)]));
      const pick = await api.showQuickPick(ruleItems(rules, sessionId, (id) => titles.get(id)), {
        placeHolder: 'Approval rules — choose one to revoke it (takes effect at once)',
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (!pick) return;
      if (pick.rule.origin === 'settings') {
        const sure = await api.showWarning(
          `OpenProgram: remove “${pick.rule.description}” from the openprogram.rules setting?`,
          'Remove from Settings',
        );
        if (sure !== 'Remove from Settings') return;
        const changed = await removeSettingsRule(api.getConfiguration('openprogram'), pick.rule);
        void api.showInfo(
          changed.length
            ? `OpenProgram: removed “${pick.rule.description}” from the settings; the next such call asks again.`
            : `OpenProgram: “${pick.rule.description}” is not in the openprogram.rules setting here; remove it where it is set.`,
        );
        return;
      }
      const revoked = await revokeRule(p.client, pick.rule.id, pick.rule.workspace);
      void api.showInfo(`OpenProgram: revoked “${revoked.description}”; the next such call asks again.`);
    }),
    cmd('openprogram.restartServer', () => p.client.restart()),
    cmd('openprogram.pickModel', async () => {
      const current = p.controller.state.settings.model;
      const ids = [...new Set([current, ...p.controller.state.settings.models, 'offline'].filter(Boolean))];
      const items: (api.QuickPickItem & { id: string | null })[] = [
        { label: `${current ? '' : '$(check) '}Server default`, description: 'OPENPROGRAM_MODEL, the config file, else offline', id: '' },
        ...ids.map((id) => ({ label: `${id === current ? '$(check) ' : ''}${id}`, id })),
        { label: 'Other model…', description: 'openai:MODEL, anthropic:MODEL, scripted:FILE', id: null },
      ];
      const pick = await api.showQuickPick(items, { placeHolder: `Model for the next turns (now: ${current || 'server default'})` });
      if (!pick) return;
      let model = pick.id;
      if (model === null) {
        model = (await api.showInputBox({ prompt: 'Model id, e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5', value: current, ignoreFocusOut: true }))?.trim() ?? null;
        if (!model) return;
      }
      await api.updateSetting('openprogram.model', model);
    }),
    cmd('openprogram.pickMode', async () => {
      const current = p.controller.state.settings.permissionMode;
      const help: Record<string, string> = {
        ask: 'reads run; edits and commands ask', 'accept-edits': 'edits run; commands ask',
        plan: 'read-only: every change is refused', bypass: 'nothing asks (use with care)',
      };
      const pick = await api.showQuickPick(
        PERMISSION_MODES.map((m) => ({ label: `${m === current ? '$(check) ' : ''}${m}`, description: help[m], mode: m })),
        { placeHolder: `Permission mode (now: ${current})` },
      );
      if (pick) await p.controller.setMode(pick.mode);
    }),
    cmd('openprogram.focusChat', async () => {
      await api.executeCommand('openprogram.chat.focus');
    }),
    cmd('openprogram.focusInput', async () => {
      await api.executeCommand('openprogram.chat.focus');
      p.controller.focusInput();
    }),
    cmd('openprogram.reviewToggleHunk', async (requestId?: unknown, index?: unknown) => {
      if (typeof requestId === 'string' && typeof index === 'number') {
        p.controller.reviews.toggle(requestId, index);
        return;
      }
      const at = api.activeCursor();
      const hunk = at ? p.controller.reviews.hunkAt(at.uri, at.line) : undefined;
      if (hunk) p.controller.reviews.toggle(hunk.requestId, hunk.index);
    }),
    cmd('openprogram.reviewChooseHunks', async (uri?: unknown) => {
      const requestId = p.controller.reviews.requestOf(uri instanceof api.Uri ? uri : api.activeCursor()?.uri);
      const hunks = requestId ? p.controller.reviews.hunkList(requestId) : [];
      if (!requestId || hunks.length === 0) {
        void api.showInfo('OpenProgram: this edit is approved or rejected whole (no hunks to choose).');
        return;
      }
      const picked = await api.showQuickPickMany(
        hunks.map((h) => ({ label: h.label, detail: h.detail, picked: h.accepted, index: h.index })),
        'The hunks to write (unchecked ones are rejected); then Apply in the editor title');
      if (picked) p.controller.reviews.choose(requestId, picked.map((h) => h.index));
    }),
    cmd('openprogram.reviewApply', async (uri?: unknown) => {
      const requestId = p.controller.reviews.requestOf(uri instanceof api.Uri ? uri : api.activeCursor()?.uri);
      if (!requestId || !p.controller.reviews.submit(requestId)) void api.showInfo('OpenProgram: this approval is no longer waiting.');
    }),
    cmd('openprogram.reviewReject', async (uri?: unknown) => {
      const requestId = p.controller.reviews.requestOf(uri instanceof api.Uri ? uri : api.activeCursor()?.uri);
      if (!requestId || !p.controller.reviews.submit(requestId, true)) void api.showInfo('OpenProgram: this approval is no longer waiting.');
    }),
    cmd('openprogram.acceptApproval', async () => {
      if (!p.controller.answerPending('allow_once')) void api.showInfo('OpenProgram: no approval is waiting.');
    }),
    cmd('openprogram.rejectApproval', async () => {
      if (!p.controller.answerPending('reject_once')) void api.showInfo('OpenProgram: no approval is waiting.');
    }),
    cmd('openprogram.showLog', async () => p.output.show()),
  ];
}
