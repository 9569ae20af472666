import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importSwebenchPredictions, predictionToTrajectory } from '../../src/formats/swebench-predictions.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realDevstral, tempFile } from './fixture-path.js';

const V1 = 'acme-agent-v1';
const V2 = 'acme-agent-v2';
const PREDICTIONS = ownFixture('swebench', 'predictions.jsonl');

const rowsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('swebench predictions importer', () => {
  it('reads predictions JSONL into patch-only trajectories, extra fields (resolved) kept in meta', async () => {
    const { items, issues } = await importSwebenchPredictions(PREDICTIONS);
    expect(issues).toEqual([]);
    expect(items).toHaveLength(13);
    expect(new Set(items.map((t) => t.instance_id)).size).toBe(12);
    const rows = rowsOf(PREDICTIONS);
    items.forEach((trajectory, index) => {
      expect(trajectory.patch).toBe(rows[index]!.model_patch);
      expect(trajectory.meta.resolved).toBe(rows[index]!.resolved);
    });
    const django = items.find((t) => t.instance_id === 'django__django-99001')!;
    expect(django.id).toBe(`${V1}/django__django-99001`);
    expect(django.source).toBe(V1);
    expect(django.messages).toEqual([]);
    expect(django.exit).toBe('unknown');
    expect(django.meta).toEqual({ importer: 'swebench-predictions', resolved: true });
    expect(django.patch.startsWith('diff --git a/django/shelves/models.py')).toBe(true);
    // one instance evaluated under two run ids: two sources
    expect(items.filter((t) => t.instance_id === 'acme__widgets-102').map((t) => t.source)).toEqual([V1, V2]);
    expect(items.filter((t) => t.meta.resolved === true)).toHaveLength(6);
  });

  it('uses the caller’s source instead of model_name_or_path and keeps the original in meta', async () => {
    const { items } = await importSwebenchPredictions(PREDICTIONS, { source: 'run-a' });
    expect(items[0]!.id).toBe('run-a/acme__widgets-102');
    expect(items[0]!.meta.model_name_or_path).toBe(V1);
  });

  it('reads the older predictions.json keyed by instance_id, and a JSON array', async () => {
    const keyed = tempFile(
      'predictions.json',
      JSON.stringify({
        'acme__widgets-7': { model_name_or_path: 'm', model_patch: 'diff --git a/x b/x\n' },
        'acme__widgets-8': { instance_id: 'acme__widgets-8', model_name_or_path: 'm', model_patch: null },
      }),
    );
    const fromKeyed = await importSwebenchPredictions(keyed);
    expect(fromKeyed.items.map((t) => t.id)).toEqual(['m/acme__widgets-7', 'm/acme__widgets-8']);
    expect(fromKeyed.items[1]!.patch).toBe('');
    expect(fromKeyed.items[1]!.meta.patch_null).toBe(true);

    const array = tempFile(
      'predictions.json',
      JSON.stringify([{ instance_id: 'a__b-1', model_name_or_path: 'x', model_patch: 'p' }], null, 2),
    );
    const fromArray = await importSwebenchPredictions(array);
    expect(fromArray.items.map((t) => [t.id, t.patch])).toEqual([['x/a__b-1', 'p']]);
  });

  it('rejects a prediction without a source, naming the field', () => {
    expect(() => predictionToTrajectory({ instance_id: 'a__b-1', model_patch: '' })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'model_name_or_path' } }),
    );
  });
});

describeRealData('swebench predictions importer on the Devstral sample', 'devstral-verified', () => {
  const DV1 = 'Devstral-Small-2505_nocondenser_swesmith_openhands-instance-prompt-v2_maxsteps50_maxtokens32k_no-demo-v1';
  const DV2 = 'Devstral-Small-2505_nocondenser_swesmith_openhands-instance-prompt-v2_maxsteps50_maxtokens32k_no-demo-v2';

  it('reads all 440 predictions (377 instances) with their patches and labels', async () => {
    const file = realDevstral('candidates.jsonl');
    const { items, issues } = await importSwebenchPredictions(file);
    expect(issues).toEqual([]);
    expect(items).toHaveLength(440);
    expect(new Set(items.map((t) => t.instance_id)).size).toBe(377);
    const rows = rowsOf(file);
    items.forEach((trajectory, index) => {
      expect(trajectory.patch).toBe(rows[index]!.model_patch);
      expect(trajectory.meta.resolved).toBe(rows[index]!.resolved);
    });
    const django = items.find((t) => t.instance_id === 'django__django-13821')!;
    expect(django.id).toBe(`${DV1}/django__django-13821`);
    expect(django.meta).toEqual({ importer: 'swebench-predictions', resolved: true });
    expect(django.patch.startsWith('diff --git a/')).toBe(true);
    expect(items.filter((t) => t.instance_id === 'astropy__astropy-13453').map((t) => t.source)).toEqual([DV1, DV2]);
    expect(items.filter((t) => t.meta.resolved === true)).toHaveLength(168);
  });
});
