/** Content-hash keys for the scorer cache: identical model input shares one key. */
import { createHash } from 'node:crypto';
import type { Serialized } from './types.js';

/**
 * `sha256(template \0 model \0 text)` in hex. The template name carries its version and the text
 * is exactly what the model sees, so a changed template, model or cut gives a new key.
 */
export function scoreKey(model: string, serialized: Pick<Serialized, 'template' | 'text'>): string {
  return createHash('sha256').update(serialized.template).update('\0').update(model).update('\0').update(serialized.text).digest('hex');
}
