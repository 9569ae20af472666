/**
 * The files of a model folder that are not the model itself: the check a folder passes before a
 * running server loads it in place of its model (reload on SIGHUP or `POST /admin/model`: a folder
 * holding `model.onnx` and its model card `config.json`, written by `winnower train`), and the
 * learned selector (`selector.json`) that loadValueModel (value-model.ts) reads beside it. Loading
 * checks the graph, the tokenizer and `selector.json` in full, all before a swap.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { wnwError } from '../errors.js';
import { LearnedSelector, SELECTOR_FILE } from '../types/selector.js';

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

/** The selector stored in `modelDir`, or undefined when the folder has none. */
export function loadSelector(modelDir: string): LearnedSelector | undefined {
  const file = join(modelDir, SELECTOR_FILE);
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE} in the model folder is not JSON: ${(error as Error).message}`, {
      details: { field: SELECTOR_FILE },
    });
  }
  const parsed = LearnedSelector.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE}: ${issue.path.join('.')}: ${issue.message}`, {
      details: { field: `${SELECTOR_FILE}.${issue.path.join('.')}` },
    });
  }
  return parsed.data;
}

/** The selector at `path` (a selector.json or its folder); `required`: a missing one is an error. */
export function loadSelectorAt(path: string, required: boolean): LearnedSelector | undefined {
  const folder = existsSync(path) && statSync(path).isFile() ? dirname(path) : path;
  const selector = loadSelector(folder);
  if (!selector && required) {
    throw wnwError('WNW_ERR_CFG_INVALID', `scorer.selector: no ${SELECTOR_FILE} at ${path}`, { details: { field: 'scorer.selector' } });
  }
  return selector;
}
