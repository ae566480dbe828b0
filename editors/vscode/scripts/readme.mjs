// The README packaged in the .vsix: VS Code's extension page only loads https: and data:
// images (its CSP), so each local image of README.md is inlined as a data: URI there.
// The repository's README keeps the relative path (GitHub shows it). Writes dist/README.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.svg': 'image/svg+xml' };

const source = readFileSync(join(ext, 'README.md'), 'utf8');
const packaged = source.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, alt, src) => {
  if (/^[a-z]+:/i.test(src)) return whole; // already absolute (https:, data:)
  const file = normalize(join(ext, src));
  if (!file.startsWith(ext + '/')) throw new Error(`README image ${src} is outside the extension`);
  const type = TYPES[extname(file).toLowerCase()];
  if (!type) throw new Error(`README image ${src}: unknown image type`);
  return `![${alt}](data:${type};base64,${readFileSync(file).toString('base64')})`;
});
mkdirSync(join(ext, 'dist'), { recursive: true });
writeFileSync(join(ext, 'dist', 'README.md'), packaged);
