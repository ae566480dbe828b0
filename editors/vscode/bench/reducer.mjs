// Streaming cost in the chat page: fold N text deltas into a state that already holds a long
// history, and render the growing reply's markdown once per 16 deltas (about one frame's worth).
// Baseline in the same run: appending the same deltas to a plain string.
// Usage: node bench/reducer.mjs [deltas=5000] [historyItems=500]
import * as esbuild from 'esbuild';

const N = Number(process.argv[2] ?? 5000);
const H = Number(process.argv[3] ?? 500);
const out = await esbuild.build({
  stdin: {
    contents: "export * from './src/webview/state'; export { renderMarkdown } from './src/webview/markdown';",
    resolveDir: '.',
    loader: 'ts',
  },
  bundle: true, write: false, format: 'esm', platform: 'node',
});
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
const { initialState, reduce, renderMarkdown } = mod;

const nodes = [];
for (let i = 0; i < H; i++) {
  nodes.push({ id: `n${i}`, role: i % 2 ? 'assistant' : 'user', text: `message ${i} with some **markdown** and \`code\``, predecessor: i ? `n${i - 1}` : null });
}
const deltas = Array.from({ length: N }, (_, i) => (i % 40 === 0 ? '\n\n```ts\nconst x = 1;\n```\n' : `word${i} `));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function runOurs() {
  let state = reduce(initialState(), { type: 'history', sessionId: 's', headId: `n${H - 1}`, nodes });
  state = reduce(state, { type: 'userSent', text: 'go', predecessor: `n${H - 1}` });
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    state = reduce(state, { type: 'event', event: { type: 'text.delta', sessionId: 's', turnId: 't', data: { text: deltas[i] } } });
    if (i % 16 === 15) renderMarkdown(state.items[state.items.length - 1].text);
  }
  return performance.now() - t0;
}

function runBaseline() {
  const t0 = performance.now();
  let text = '';
  for (let i = 0; i < N; i++) text += deltas[i];
  if (text.length === 0) throw new Error('unreachable');
  return performance.now() - t0;
}

const ours = [];
const base = [];
for (let r = 0; r < 7; r++) {
  ours.push(runOurs());
  base.push(runBaseline());
}
const o = median(ours);
const b = median(base);
console.log(`deltas=${N} history=${H} reply=${deltas.join('').length} chars`);
console.log(`reducer+markdown: ${o.toFixed(1)} ms total, ${((o / N) * 1000).toFixed(1)} µs/delta (median of 7)`);
console.log(`baseline string append: ${b.toFixed(2)} ms total, ${((b / N) * 1000).toFixed(2)} µs/delta`);
