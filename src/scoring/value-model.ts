/**
 * A value model as the rest of winnower uses it: the scorer, and what came with the model from
 * its config and folder — the learned selector (selector.json), the model's chat template, the
 * serialization template it was trained on, and its identity (content hashes, recorded by every
 * job as `scored_by`). Loaded once, together, so the scorer wrappers carry only what scores; the
 * server's hot reload swaps a whole ValueModel (reloadable.ts).
 */
import { findChatTemplate, loadChatTemplate } from '../serialize/chat-template.js';
import type { LearnedSelector } from '../types/selector.js';
import { loadSelectorAt } from './model-folder.js';
import { buildScorer, parseScorerConfig, type ScorerConfigInput } from './registry.js';
import { scorerIdentity, type ScorerIdentity } from './scorer-identity.js';
import type { Scorer } from './types.js';
import type { ScorerObserver } from './with-observer.js';

export interface ValueModel {
  readonly scorer: Scorer;
  /** The learned selector that came with the model (its folder's selector.json, or `scorer.selector`), if any. */
  readonly selector?: LearnedSelector;
  /** The model's own chat template (Jinja source), for templates of layout `chat`; read from a local file, never downloaded. */
  readonly chatTemplate?: string;
  /** The serialization template the model was trained on, used when a call names none. */
  readonly template?: string;
  /** Which model folder, selector and server this is. */
  readonly identity: ScorerIdentity;
}

/**
 * Validates `config`, builds its scorer (registry.ts) and loads what comes with the model. A
 * failure after the scorer is up (a broken selector.json) closes the scorer before it throws.
 */
export async function loadValueModel(config: ScorerConfigInput, options: { observer?: ScorerObserver } = {}): Promise<ValueModel> {
  const resolved = parseScorerConfig(config);
  const chatTemplate =
    resolved.chatTemplate !== undefined
      ? loadChatTemplate(resolved.chatTemplate)
      : findChatTemplate(resolved.tokenizer ?? (resolved.backend === 'onnx' ? resolved.model : undefined));
  const scorer = await buildScorer(resolved, options);
  const selectorPath = resolved.selector ?? (resolved.backend === 'onnx' ? resolved.model : undefined);
  let selector: LearnedSelector | undefined;
  let identity: ScorerIdentity;
  try {
    selector = selectorPath === undefined ? undefined : loadSelectorAt(selectorPath, resolved.selector !== undefined);
    identity = await scorerIdentity({
      backend: resolved.backend,
      model: resolved.model,
      name: scorer.model,
      urls: resolved.urls,
      ...(selectorPath === undefined ? {} : { selectorPath }),
      ...(selector ? { selector } : {}),
    });
  } catch (error) {
    // A broken selector.json next to a good model: the model's workers must not outlive the refusal.
    await scorer.close();
    throw error;
  }
  return {
    scorer,
    ...(selector ? { selector } : {}),
    ...(chatTemplate === undefined ? {} : { chatTemplate }),
    ...(resolved.template === undefined ? {} : { template: resolved.template }),
    identity,
  };
}
