/** Extension settings: their defaults and how they become the server's launch options. */

export const PERMISSION_MODES = ['ask', 'accept-edits', 'plan', 'bypass'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export interface Settings {
  serverCommand: string;
  serverArgs: string[];
  model: string;
  permissionMode: PermissionMode;
  approvalTimeout: number;
  home: string;
  /** MCP servers in the `.mcp.json` shape: `{name: {command, args, env} | {type: 'http', url, headers}}`. */
  mcpServers: Record<string, unknown>;
  /** Tool-name patterns never offered to the model (static admission), e.g. `mcp__github__*`. */
  disabledTools: string[];
  /** Attach to a running `serve --tcp` (its port or run file) instead of starting a server. */
  connect: string;
  /** Base URL and key source per provider (user settings only; never the key itself). */
  providers: Record<ProviderName, ProviderSettings>;
  /** Approval rules the user wrote (fnmatch patterns), sent as the server's `rules`. */
  rules: SettingsRule[];
  /** Whether switching branch also switches the workspace's code: ask (once), always, never. */
  switchCode: SwitchCode;
  /** Agent blame: code lenses, hovers and the restore-hunk code action. */
  blameEnabled: boolean;
  /** Models the panel's model picker offers besides the current one and `offline`. */
  models: string[];
}

/** One entry of `openprogram.rules`. */
export interface SettingsRule {
  tool: string;
  decision: 'allow' | 'deny';
  pattern?: string;
}

/** Whether a value is a well-formed `openprogram.rules` entry. */
export function isSettingsRule(v: unknown): v is SettingsRule {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.tool === 'string' &&
    r.tool.length > 0 &&
    (r.decision === 'allow' || r.decision === 'deny') &&
    (r.pattern === undefined || r.pattern === null || typeof r.pattern === 'string')
  );
}

export const SWITCH_CODE = ['ask', 'always', 'never'] as const;
export type SwitchCode = (typeof SWITCH_CODE)[number];

export const PROVIDERS = ['openai', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];
export interface ProviderSettings {
  baseUrl: string;
  apiKeyEnv: string;
  apiKeyCommand: string;
}
/**
 * Settings only the user's own (global) settings may set: each runs code, sends the user's key
 * somewhere, or widens what the agent may do unasked. A workspace's `.vscode/settings.json`
 * travels with the repository; its values for these are ignored (package.json gives them
 * `application` or `machine` scope, and `userOnly` reads `inspect().globalValue`).
 */
export const USER_ONLY_KEYS = [
  'permissionMode',
  'mcpServers',
  'server.command',
  'server.args',
  'server.connect',
  'home',
  'rules',
  ...PROVIDERS.flatMap((p) => [`${p}.baseUrl`, `${p}.apiKeyEnv`, `${p}.apiKeyCommand`]),
];

/** The part of a `WorkspaceConfiguration` the settings are read through. */
export interface ConfigView {
  get(key: string): unknown;
  inspect(key: string): { globalValue?: unknown } | undefined;
}

/** A setting's value as the extension uses it: the user's own for `USER_ONLY_KEYS`. */
export function userOnly(cfg: ConfigView): (key: string) => unknown {
  return (key) => (USER_ONLY_KEYS.includes(key) ? cfg.inspect(key)?.globalValue : cfg.get(key));
}
const NO_PROVIDER: ProviderSettings = { baseUrl: '', apiKeyEnv: '', apiKeyCommand: '' };

export const DEFAULTS: Settings = {
  serverCommand: 'openprogram-lsp',
  serverArgs: ['serve'],
  model: '',
  permissionMode: 'ask',
  approvalTimeout: 300,
  home: '',
  mcpServers: {},
  disabledTools: [],
  connect: '',
  providers: { openai: NO_PROVIDER, anthropic: NO_PROVIDER },
  rules: [],
  switchCode: 'ask',
  blameEnabled: true,
  models: [],
};

/** What the client needs to spawn the server. */
export interface LaunchPlan {
  command: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  initializationOptions: Record<string, unknown>;
  /** Settings that were invalid and fell back to defaults (shown to the user). */
  problems: string[];
}

/** Read raw setting values (anything a user may type) into typed settings with defaults. */
export function parseSettings(get: (key: string) => unknown): { settings: Settings; problems: string[] } {
  const problems: string[] = [];
  const str = (key: string, dflt: string): string => {
    const v = get(key);
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'string') {
      problems.push(`openprogram.${key} must be a string`);
      return dflt;
    }
    return v.trim();
  };
  const mode = get('permissionMode') ?? DEFAULTS.permissionMode;
  let permissionMode = DEFAULTS.permissionMode;
  if ((PERMISSION_MODES as readonly unknown[]).includes(mode)) {
    permissionMode = mode as PermissionMode;
  } else {
    problems.push(`openprogram.permissionMode must be one of ${PERMISSION_MODES.join(', ')}`);
  }
  const timeoutRaw = get('approvalTimeout') ?? DEFAULTS.approvalTimeout;
  let approvalTimeout = DEFAULTS.approvalTimeout;
  if (typeof timeoutRaw === 'number' && Number.isFinite(timeoutRaw) && timeoutRaw > 0) {
    approvalTimeout = timeoutRaw;
  } else {
    problems.push('openprogram.approvalTimeout must be a positive number of seconds');
  }
  const argsRaw = get('server.args') ?? DEFAULTS.serverArgs;
  let serverArgs = DEFAULTS.serverArgs;
  if (Array.isArray(argsRaw) && argsRaw.every((a) => typeof a === 'string')) {
    serverArgs = argsRaw as string[];
  } else {
    problems.push('openprogram.server.args must be a list of strings');
  }
  const mcpRaw = get('mcpServers') ?? DEFAULTS.mcpServers;
  let mcpServers = DEFAULTS.mcpServers;
  if (typeof mcpRaw === 'object' && mcpRaw !== null && !Array.isArray(mcpRaw)) {
    mcpServers = mcpRaw as Record<string, unknown>;
  } else {
    problems.push('openprogram.mcpServers must be an object of server name -> definition');
  }
  const disabledRaw = get('disabledTools') ?? DEFAULTS.disabledTools;
  let disabledTools = DEFAULTS.disabledTools;
  if (Array.isArray(disabledRaw) && disabledRaw.every((a) => typeof a === 'string')) {
    disabledTools = disabledRaw as string[];
  } else {
    problems.push('openprogram.disabledTools must be a list of tool-name patterns');
  }
  const providers = { ...DEFAULTS.providers };
  for (const name of PROVIDERS) {
    let baseUrl = str(`${name}.baseUrl`, '');
    if (baseUrl && !/^https?:\/\/\S+$/i.test(baseUrl)) {
      problems.push(`openprogram.${name}.baseUrl must be an http(s) URL`);
      baseUrl = '';
    }
    let apiKeyEnv = str(`${name}.apiKeyEnv`, '');
    if (apiKeyEnv && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv)) {
      problems.push(`openprogram.${name}.apiKeyEnv must be a variable name, not the key`);
      apiKeyEnv = '';
    }
    providers[name] = { baseUrl, apiKeyEnv, apiKeyCommand: str(`${name}.apiKeyCommand`, '') };
  }
  const rulesRaw = get('rules') ?? DEFAULTS.rules;
  let rules = DEFAULTS.rules;
  if (Array.isArray(rulesRaw) && rulesRaw.every(isSettingsRule)) {
    rules = rulesRaw;
  } else {
    problems.push('openprogram.rules must be a list of {tool, decision: "allow"|"deny", pattern?}');
  }
  const switchRaw = get('switchCode') ?? DEFAULTS.switchCode;
  let switchCode = DEFAULTS.switchCode;
  if ((SWITCH_CODE as readonly unknown[]).includes(switchRaw)) {
    switchCode = switchRaw as SwitchCode;
  } else {
    problems.push(`openprogram.switchCode must be one of ${SWITCH_CODE.join(', ')}`);
  }
  const blameRaw = get('blame.enabled') ?? DEFAULTS.blameEnabled;
  let blameEnabled = DEFAULTS.blameEnabled;
  if (typeof blameRaw === 'boolean') {
    blameEnabled = blameRaw;
  } else {
    problems.push('openprogram.blame.enabled must be true or false');
  }
  const modelsRaw = get('models') ?? DEFAULTS.models;
  let models = DEFAULTS.models;
  if (Array.isArray(modelsRaw) && modelsRaw.every((a) => typeof a === 'string')) {
    models = (modelsRaw as string[]).map((m) => m.trim()).filter(Boolean);
  } else {
    problems.push('openprogram.models must be a list of model ids');
  }
  const settings: Settings = {
    serverCommand: str('server.command', DEFAULTS.serverCommand) || DEFAULTS.serverCommand,
    serverArgs,
    model: str('model', DEFAULTS.model),
    permissionMode,
    approvalTimeout,
    home: str('home', DEFAULTS.home),
    mcpServers,
    disabledTools,
    connect: str('server.connect', DEFAULTS.connect),
    providers,
    rules,
    switchCode,
    blameEnabled,
    models,
  };
  return { settings, problems };
}

/** Expand `${workspaceFolder}`, `${env:NAME}` and a leading `~` in a setting value. */
export function expand(value: string, folder: string | undefined, env: Record<string, string | undefined>): string {
  let out = value.replace(/\$\{workspaceFolder\}/g, folder ?? '');
  out = out.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => env[name] ?? '');
  if (out === '~' || out.startsWith('~/')) {
    out = (env.HOME ?? '') + out.slice(1);
  }
  return out;
}

/** Turn settings into the command, environment and initializationOptions of the server. */
export function launchPlan(
  settings: Settings,
  folder: string | undefined,
  env: Record<string, string | undefined>,
): LaunchPlan {
  const x = (v: string): string => expand(v, folder, env);
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined) childEnv[k] = v;
  }
  const model = x(settings.model);
  if (model) childEnv.OPENPROGRAM_MODEL = model;
  if (settings.home) childEnv.OPENPROGRAM_HOME = x(settings.home);
  return {
    command: x(settings.serverCommand),
    args: settings.serverArgs.map(x),
    cwd: folder,
    env: childEnv,
    initializationOptions: {
      ...(model ? { model } : {}),
      permissionMode: settings.permissionMode,
      approvalTimeout: settings.approvalTimeout,
      ...(Object.keys(settings.mcpServers).length ? { mcpServers: settings.mcpServers } : {}),
      ...(settings.disabledTools.length ? { disabledTools: settings.disabledTools } : {}),
      ...providerOptions(settings, x),
      ...(settings.rules.length ? { rules: settings.rules } : {}),
      blame: { enabled: settings.blameEnabled },
      client: 'vscode',
    },
    problems: [],
  };
}

/** `providers` of the initialization options: only what the user set, `~`/`${env:..}` expanded. */
function providerOptions(settings: Settings, x: (v: string) => string): { providers?: Record<string, Record<string, string>> } {
  const out: Record<string, Record<string, string>> = {};
  for (const name of PROVIDERS) {
    const p = settings.providers[name];
    const given: Record<string, string> = {};
    if (p.baseUrl) given.baseUrl = x(p.baseUrl);
    if (p.apiKeyEnv) given.apiKeyEnv = p.apiKeyEnv;
    if (p.apiKeyCommand) given.apiKeyCommand = x(p.apiKeyCommand);
    if (Object.keys(given).length) out[name] = given;
  }
  return Object.keys(out).length ? { providers: out } : {};
}
