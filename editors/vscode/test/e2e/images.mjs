// The image part of the end-to-end run (#39), after context.mjs's steps on the extension's own
// server: an image is copied to the clipboard and pasted into the chat input (Ctrl+V in the
// webview, as a user does). It shows as a chip with its thumbnail, goes with the next message,
// reaches the scripted model as an image (its recorded input) and the sent message shows it.
import { existsSync, readFileSync } from 'node:fs';

const T = 60_000;
/** A 12x8 RGB PNG (a red-to-blue gradient), made with Pillow once; its bytes in base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAwAAAAICAIAAABChommAAAAF0lEQVR4nGP8z8DwhkEEP2JiIAIMb0UAFkwMD013v18AAAAASUVORK5CYII=';

/** The user message of the scripted model's last call, from its recorded input `log`. */
function lastUser(log) {
  if (!existsSync(log)) return null;
  const lines = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
  const users = JSON.parse(lines.at(-1)).messages.filter((m) => m.role === 'user');
  return users.at(-1) ?? null;
}

/** Paste the image into `input` (the chat frame's textarea) through the clipboard: the
 * workbench page writes it with the async clipboard API, then Ctrl+V in the webview. */
async function pasteFromClipboard(page, input) {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
  await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    await navigator.clipboard.write([new ClipboardItem({ 'image/png': new Blob([bytes], { type: 'image/png' }) })]);
  }, PNG);
  await input.click();
  await page.keyboard.press('Control+V');
}

export async function pasteImage({ page, frame, input, modelLog, begin, shot }) {
  begin('an image pasted into the input is a chip with its thumbnail');
  await pasteFromClipboard(page, input);
  const chip = frame.locator('.chip-attachment.kind-image');
  await chip.waitFor({ timeout: T });
  await chip.locator('img.thumb').waitFor({ timeout: T });
  const label = (await chip.locator('.chip-label').textContent())?.trim() ?? '';
  await shot('images-01-pasted');

  begin('sent: the model gets it as an image; the sent message shows it');
  await input.pressSequentially('what does this show?');
  await input.press('Enter');
  const sent = frame.locator('.msg.role-user', { hasText: 'what does this show?' });
  await sent.locator('.sent-attachment', { hasText: label }).first().waitFor({ timeout: T });
  await frame.locator('.msg.role-assistant', { hasText: 'A pasted picture.' }).waitFor({ timeout: T });
  const user = lastUser(modelLog);
  const images = (user?.images ?? []).map((i) => `${i.media_type} ${i.width}x${i.height}`);
  if (JSON.stringify(images) !== JSON.stringify(['image/png 12x8'])) throw new Error(`the model got images ${JSON.stringify(images)}`);
  if (!/<image path="[^"]+" type="image\/png" pixels="12x8"\/>/.test(user.content)) throw new Error(`the model's message does not name the image:\n${user.content}`);
  if (await frame.locator('.chip-attachment.kind-image').count()) throw new Error('the image chip stayed after sending');
  await shot('images-02-sent');
}
