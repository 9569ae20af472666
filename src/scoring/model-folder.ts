/**
 * The check a model folder passes before a running server loads it in place of its model (reload
 * on SIGHUP or `POST /admin/model`): a folder holding `model.onnx` and its model card
 * (`config.json`, written by `winnower train`). Loading it (createScorer) then checks the graph,
 * the tokenizer and `selector.json` in full, all before the swap.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { wnwError } from '../errors.js';

export function checkModelFolder(folder: string): void {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw wnwError('WNW_ERR_SCORE_MODEL', `${folder} is not a folder`, { details: { file: folder } });
  }
  for (const file of ['model.onnx', 'config.json']) {
    const path = join(folder, file);
    if (!existsSync(path))
      throw wnwError(
        'WNW_ERR_SCORE_MODEL',
        `${folder} has no ${file}${file === 'config.json' ? ' (the model card winnower train writes)' : ''}`,
        { details: { file: path } },
      );
  }
}
