/** Entry point: builds the parts and wires them together; the logic lives in the modules. */
import { AgentTree, affectsAgents } from './agents/tree';
import { AgentClient, readSettings, type ServerState } from './client';
import { BRANCH_SCHEME, BranchDiffContent } from './branches/diff';
import { BranchTree } from './branches/tree';
import { ChatController } from './chat/controller';
import { ChatViewProvider } from './chat/view';
import { CheckpointContentProvider } from './checkpoints/content';
import { CheckpointTree } from './checkpoints/tree';
import { CHECKPOINT_SCHEME } from './checkpoints/uri';
import { HunkLensProvider } from './checkpoints/hunks';
import { REVIEW_SCHEME } from './chat/review';
import { registerCommands } from './commands';
import { statusView } from './status';
import { versionNote } from './install';
import { setLogChannel, traceInfo } from './log';
import { pendingApprovals, type PanelSettings } from './webview/state';
import * as api from './vscodeapi';

let client: AgentClient | undefined;

/** Settings whose change needs a new server process. */
const RESTART_KEYS = ['openprogram.server', 'openprogram.home', 'openprogram.mcpServers', 'openprogram.disabledTools',
  'openprogram.openai', 'openprogram.anthropic'];

/** What the panel's header shows from the settings. */
function panelSettings(): PanelSettings {
  const { settings } = readSettings();
  return { model: settings.model, models: settings.models, permissionMode: settings.permissionMode };
}

export async function activate(context: api.ExtensionContext): Promise<void> {
  const output = api.createLogChannel('OpenProgram');
  const trace = api.createLogChannel('OpenProgram Trace');
  setLogChannel(output);
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  client = new AgentClient(output, trace, { version, extensionDir: context.extensionUri.fsPath, storageDir: context.globalStorageUri.fsPath });
  const controller = new ChatController(client, context.workspaceState);
  const chatView = new ChatViewProvider(context.extensionUri, controller);
  const current = (): string | null => controller.state.sessionId;
  const checkpoints = new CheckpointTree(client, current);
  const branches = new BranchTree(client, current);
  const agents = new AgentTree(client, current);
  const content = new CheckpointContentProvider(client);
  const branchContent = new BranchDiffContent();
  const views = { branches: api.createTreeView('openprogram.branches', branches), agents: api.createTreeView('openprogram.agents', agents) };
  const status = api.createStatusBarItem();
  status.command = 'openprogram.focusChat';
  status.name = 'OpenProgram';
  let server: { state: ServerState; detail?: string } = { state: 'starting' };
  const showStatus = (): void => {
    const view = statusView(server.state, server.detail, controller.state, versionNote(client?.serverVersion, version));
    status.text = view.text;
    // stopped: one click restarts; else it opens the chat
    status.command = server.state === 'stopped' ? 'openprogram.restartServer' : 'openprogram.focusChat';
    status.tooltip = view.tooltip;
    status.backgroundColor = view.alert ? new api.ThemeColor(server.state === 'stopped' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground') : undefined;
    status.show();
    chatView.setBadge(view.waiting);
    void api.setContext('openprogram.pendingApproval', pendingApprovals(controller.state).length > 0);
  };
  showStatus();
  controller.setSettings(panelSettings());
  controller.setActiveFile(api.activeFile());

  context.subscriptions.push(
    output,
    trace,
    status,
    controller,
    checkpoints,
    branches,
    agents,
    api.registerWebviewViewProvider(ChatViewProvider.viewType, chatView),
    api.createTreeView('openprogram.checkpoints', checkpoints),
    views.branches,
    views.agents,
    api.registerContentProvider(CHECKPOINT_SCHEME, content),
    api.registerContentProvider(BRANCH_SCHEME, branchContent),
    api.registerCodeLens(CHECKPOINT_SCHEME, new HunkLensProvider(content)),
    api.registerContentProvider(REVIEW_SCHEME, controller.reviews),
    api.registerCodeLens(REVIEW_SCHEME, controller.reviews),
    ...registerCommands({ client, controller, chatView, checkpoints, branches, agents, content, branchContent, memento: context.workspaceState, output, views }),
    controller.onTurnFinished(() => {
      checkpoints.refresh();
      branches.refresh();
      agents.refresh();
    }),
    client.onEvent((e) => {
      if (affectsAgents(e)) agents.refresh();
    }),
    controller.onDidChange(showStatus),
    // the active file is a chip of the next message (removable)
    api.onDidChangeActiveEditor(() => controller.setActiveFile(api.activeFile())),
    client.onState(({ state, detail }) => {
      server = { state, detail };
      showStatus();
      if (state === 'running') {
        checkpoints.refresh();
        branches.refresh();
        agents.refresh();
      }
    }),
    api.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('openprogram')) controller.setSettings(panelSettings());
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) {
        traceInfo('settings changed; restarting the server');
        void client?.restart();
      }
    }),
  );
  void api.setContext('openprogram.canUndoRestore', context.workspaceState.get('openprogram.lastSafetyCheckpointId') !== undefined);
  void client.restart();
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = undefined;
}
