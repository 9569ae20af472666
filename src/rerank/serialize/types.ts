/** The serialization seam: a named, versioned template turns (task, trajectory) into model input. */
import type { Task } from '../../types/task.js';
import type { Trajectory } from '../../types/trajectory.js';
import type { Cut } from '../../types/score.js';
import type { Tokenizer } from '../tokenizer.js';

export interface SerializeOptions {
  /** Template name with version, e.g. `judge-v1`, `patch-v1`. */
  template: string;
  /** Token budget for the whole input. */
  budgetTokens: number;
  /** The model's tokenizer; without one, tokens are estimated (and marked so). */
  tokenizer?: Tokenizer;
}

export interface Serialized {
  template: string;
  text: string;
  /** Token ids of `text` when a tokenizer was given. */
  inputIds?: number[];
  inputTokens: number;
  /** True when tokens were estimated rather than counted. */
  estimated: boolean;
  truncated: boolean;
  cut: Cut;
  /** Length in characters of the shared prefix (instructions + issue), identical across an instance's candidates. */
  prefixChars: number;
}
