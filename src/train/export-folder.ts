/**
 * The export stage of `winnower train`: the fitted parameters as the folder's `model.onnx`
 * (onnx-export.ts), and its `selector.json` with the model card (model-card.ts), written once
 * before validation (the onnx scorer reads config.json) and again with the results.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SELECTOR_FILE } from '../select/index.js';
import type { FittedSide } from './fit-side.js';
import { type ModelCardInput, writeModelCard } from './model-card.js';
import { exportValueModel } from './onnx-export.js';

export async function exportModel(fitted: FittedSide, outDir: string, docString: string): Promise<void> {
  const { params, space, calibration } = fitted;
  await writeFile(join(outDir, 'model.onnx'), exportValueModel({ params, space, calibration, docString }));
}

export async function writeSelectorAndCard(card: ModelCardInput): Promise<void> {
  await writeFile(join(card.outDir, SELECTOR_FILE), `${JSON.stringify(card.selector, null, 2)}\n`);
  await writeModelCard(card);
}
