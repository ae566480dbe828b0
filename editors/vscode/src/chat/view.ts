/** The chat webview view: strict CSP with a nonce, and the bridge to the controller. */
import type { ChatController } from './controller';
import type { HostMessage, PageMessage } from '../webview/messages';
import * as api from '../vscodeapi';

/** A random nonce for the page's one script tag. */
export function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}

/** The page's HTML: only our script (by nonce) and stylesheet may load. */
export function chatHtml(cspSource: string, scriptUri: string, styleUri: string, n: string): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${n}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${styleUri}" rel="stylesheet">
<title>OpenProgram</title>
</head>
<body>
<div id="app"></div>
<script nonce="${n}" src="${scriptUri}"></script>
</body>
</html>`;
}

/** Provides the `openprogram.chat` view. */
export class ChatViewProvider implements api.WebviewViewProvider {
  static readonly viewType = 'openprogram.chat';
  private view: api.WebviewView | undefined;

  constructor(
    private readonly extensionUri: api.Uri,
    private readonly controller: ChatController,
  ) {}

  resolveWebviewView(view: api.WebviewView): void {
    this.view = view;
    this.setBadge(this.badge);
    const media = api.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const script = view.webview.asWebviewUri(api.Uri.joinPath(media, 'webview.js')).toString();
    const style = view.webview.asWebviewUri(api.Uri.joinPath(media, 'webview.css')).toString();
    view.webview.html = chatHtml(view.webview.cspSource, script, style, nonce());
    view.webview.onDidReceiveMessage((m: PageMessage) => {
      void this.controller.onPageMessage(m);
    });
    // Messages posted while the view is hidden can be lost; a visible view gets the whole state.
    view.onDidChangeVisibility(() => {
      if (view.visible) {
        this.controller.resync();
      }
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.controller.attach(undefined);
      }
    });
    this.controller.attach({
      post: (msg: HostMessage) => {
        void view.webview.postMessage(msg);
      },
      get visible() {
        return view.visible;
      },
    });
  }

  private badge = 0;

  /** The count on the activity bar icon: cards waiting for an answer (0 hides it). */
  setBadge(waiting: number): void {
    this.badge = waiting;
    if (this.view) {
      // `undefined` does not clear a shown badge in every VS Code version; 0 does.
      this.view.badge = waiting > 0 ? { value: waiting, tooltip: `${waiting} waiting for your answer` } : { value: 0, tooltip: '' };
    }
  }

  /** Reveal the view (used before submitting a draft). */
  reveal(): void {
    this.view?.show(true);
  }
}
