/**
 * `npm run models`: writes the bundled tiny value model to models/tiny-value/.
 * `tsx models/build-tiny-model.ts --kind two-class|multi-label|causal-lm --out <dir>` builds a variant elsewhere.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildTinyModel, type TinyModelKind } from './tiny-model.js';

const KINDS: TinyModelKind[] = ['scalar', 'two-class', 'multi-label', 'causal-lm'];

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'scalar' },
    out: { type: 'string', default: fileURLToPath(new URL('./tiny-value/', import.meta.url)) },
  },
});
const kind = values.kind as TinyModelKind;
if (!KINDS.includes(kind)) {
  console.error(`unknown --kind ${values.kind}; use one of ${KINDS.join(', ')}`);
  process.exit(2);
}
const info = buildTinyModel({ kind, outDir: values.out });
console.log(`built ${info.kind} model in ${info.outDir}: vocabulary ${info.vocabSize}, hidden ${info.hiddenSize}`);
