/**
 * `winnower rerank` pointed at a vLLM serving the OpenHands critic (here the fake of current vLLM,
 * 27 labels), with the flags the README gives: the real CLI in a child process.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, runCli } from '../support/cli.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { QWEN3_TOKENIZER_CONFIG } from '../scoring/http/helpers.js';
import { tempDir } from '../support/temp-dir.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/importers/openhands/acme__gadgets-201.output.jsonl', import.meta.url));

interface ScoreLine {
  trajectory_id: string;
  chosen: boolean;
  score: { value: number; raw: number; template: string; backend: string; model: string } | null;
  error: { code: string; message: string } | null;
}

describe('winnower rerank with the OpenHands critic on vLLM', () => {
  let server: FakeVllm;
  beforeAll(async () => {
    server = await startFakeVllm({ model: 'critic', numLabels: 27, problemType: 'multi_label_classification', maxModelLen: 65_536 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('scores OpenHands trajectories with openhands-critic-v1 and the sigmoid of the success logit', async () => {
    const dir = tempDir('wnw-critic-');
    const out = join(dir, 'predictions.jsonl');
    const run = await runCli([
      'rerank',
      '--candidates',
      `run-a=${FIXTURE}`,
      '--candidates',
      `run-b=${FIXTURE}`,
      '--scorer',
      'vllm',
      '--url',
      server.url,
      '--model',
      'critic',
      '--api-key',
      'k',
      '--head-labels',
      'openhands-critic',
      '--template',
      'openhands-critic-v1',
      '--chat-template',
      QWEN3_TOKENIZER_CONFIG,
      '--budget',
      '65536',
      '--out',
      out,
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const lines = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
    expect(lines).toHaveLength(2);
    const sent: string = server.bodies('/classify').at(-1)!.input[0];
    expect(sent.startsWith('<|im_start|>system\nYou are OpenHands agent')).toBe(true);
    expect(sent).toContain('\n# Tools\n');
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer k');
    for (const line of lines) {
      expect(line.error).toBeNull();
      expect(line.score).toMatchObject({ template: 'openhands-critic-v1', backend: 'vllm', model: 'critic' });
      expect(line.score!.raw).toBe(server.logits(sent)[0]);
      expect(line.score!.value).toBeCloseTo(1 / (1 + Math.exp(-line.score!.raw)), 12);
    }
  });

  describe('on a server whose max_model_len is 8000 (issue 24 items 4 and 7)', () => {
    let small: FakeVllm;
    beforeAll(async () => {
      small = await startFakeVllm({ model: 'critic', numLabels: 27, problemType: 'multi_label_classification', maxModelLen: 8_000 });
    });
    afterAll(async () => {
      await small.close();
    });
    const rerank = (budget: string) => {
      const out = join(tempDir('wnw-critic-'), 'predictions.jsonl');
      // No --head-labels: the critic template implies the critic's head.
      const args = [
        'rerank',
        '--candidates',
        `run-a=${FIXTURE}`,
        '--scorer',
        'vllm',
        '--url',
        small.url,
        '--model',
        'critic',
        '--template',
        'openhands-critic-v1',
        '--chat-template',
        QWEN3_TOKENIZER_CONFIG,
        '--budget',
        budget,
        '--out',
        out,
        '--no-progress',
      ];
      return { out, run: runCli(args) };
    };

    it('--budget 8000 reaches the scorer and the candidates are scored with the head the template implies', async () => {
      const { out, run } = rerank('8000');
      const done = await run;
      expect(done.code, done.stderr).toBe(0);
      const [line] = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
      expect(line!.error).toBeNull();
      const sent: string = small.bodies('/classify').at(-1)!.input[0];
      expect(line!.score!.raw).toBe(small.logits(sent)[0]);
    });

    it("--budget above the server's max_model_len is a clear error naming both", async () => {
      const { run } = rerank('65536');
      const done = await run;
      expect(done.code).not.toBe(0);
      expect(done.stderr).toContain("65536 is more than the server's max_model_len 8000");
    });
  });
});
