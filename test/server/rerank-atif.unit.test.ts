/** POST /rerank and /score take candidates as ATIF documents, scored as the same trajectory in winnower's format is. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { fromAtif, toAtif } from '../../src/formats/atif/index.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { exampleAtif } from '../formats/atif/example.js';
import { textModeRollout, toolsModeRollout } from '../formats/atif/trajectories.js';
import { startTestApp, type TestApp } from './test-app.js';

const task = { instance_id: 'fix-median', problem_statement: 'median() is wrong for even-length lists' };
const PATCH = 'diff --git a/stats.py b/stats.py\n--- a/stats.py\n+++ b/stats.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

describe('ATIF candidates in /rerank and /score', () => {
  let valueModel: ValueModel;
  let server: TestApp;
  beforeAll(async () => {
    valueModel = await loadValueModel({ backend: 'onnx', model: DEFAULT_MODEL_DIR() });
    server = await startTestApp({ valueModel });
  });
  afterAll(async () => {
    await server?.close();
    await valueModel?.scorer.close();
  });

  const post = (url: string, candidates: unknown[], extra: Record<string, unknown> = {}) =>
    server.app.inject({ method: 'POST', url, payload: { task, candidates, ...extra } });

  it('scores an ATIF document as it scores the same trajectory sent in winnower format', async () => {
    const harbor = { ...exampleAtif(), extra: { instance_id: 'fix-median', patch: PATCH } };
    const ownDocument = toAtif(toolsModeRollout());
    const asWinnower = { ...fromAtif(harbor).trajectory, id: 'same-as-harbor' };
    // A template that reads the messages, not only the patch.
    const response = await post('/rerank', [harbor, ownDocument, asWinnower], { template: 'judge-v1' });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    const scores = body.scores as Array<{ trajectory_id: string; value: number; input_tokens: number }>;
    // A foreign document is named by its session_id; winnower's own keeps its candidate id.
    expect(scores.map((score) => score.trajectory_id)).toEqual(['run-7f3a', 'job1/0', 'same-as-harbor']);
    expect(scores[0]!.value).toBe(scores[2]!.value);
    expect(scores[0]!.input_tokens).toBe(scores[2]!.input_tokens);
    expect(body.scores[0].template).toBe('judge-v1');
    expect(body.warnings).toBeUndefined();
  });

  it('names ATIF documents without an id by their position, and fills in the task', async () => {
    const bare = (patch: string) => {
      const document = exampleAtif();
      delete document.session_id;
      document.extra = { patch };
      return document;
    };
    const response = await post('/score', [bare(PATCH), bare(PATCH.replace('x = 2', 'x = 3'))]);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().scores.map((score: { trajectory_id: string }) => score.trajectory_id)).toEqual(['atif-0', 'atif-1']);
  });

  it('answers ATIF-v1.8 keys it does not know with a warning, and reads the rest', async () => {
    const document = exampleAtif();
    document.schema_version = 'ATIF-v1.8';
    document.steps[3].sentiment = 'calm';
    const response = await post('/rerank', [document, toAtif(textModeRollout())]);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().warnings).toEqual([expect.stringMatching(/1 ATIF-v1\.8 candidate\(s\).*run-7f3a: steps\[3\]\.sentiment/)]);
  });

  it('refuses an invalid ATIF document with a 400 naming the candidate and its field', async () => {
    const document = exampleAtif();
    document.steps[3].step_id = 9;
    const response = await post('/rerank', [toAtif(toolsModeRollout()), document]);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe('body.candidates.1.steps.3.step_id');
    expect(response.json().error.message).toMatch(/must be 4/);
  });
});
