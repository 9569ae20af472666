/** The serialization seam: a named, versioned template turns (task, trajectory) into model input. */
import type { Task } from '../types/task.js';
import type { Trajectory } from '../types/trajectory.js';
import type { Cut } from '../types/score.js';
import type { Tokenizer } from './tokenizer.js';
import type { ChatTemplateSettings, TemplateSettings } from './template-schema.js';

export type { Task, Trajectory, Cut, Tokenizer, TemplateSettings };

export interface SerializeOptions {
  /** Template name with version, e.g. `judge-v1`, `patch-v1`. */
  template: string;
  /** Token budget for the whole input. */
  budgetTokens: number;
  /** The model's tokenizer; without one, tokens are estimated (and marked so). */
  tokenizer?: Tokenizer;
  /** Overrides of the template's `defaults` (head/tail sizes, steps always kept, ...). */
  settings?: Partial<TemplateSettings> | Partial<ChatTemplateSettings>;
  /** The model's chat template (Jinja source), needed by templates of layout `chat`. */
  chatTemplate?: string;
  /** Folders searched for `<template>.yaml` before the built-in templates. */
  templateDirs?: string[];
  signal?: AbortSignal;
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
  /** Cuts the shared `Cut` type has no field for (both rare, last resort). */
  cutDetail: {
    /** The issue was cut: larger than the template's share of the budget, or nothing else was left to cut. */
    issue: boolean;
    /** Actions (tool calls, commands) of kept steps cut to head + tail. */
    actions: number;
  };
  /** Length in characters of the shared prefix (instructions + issue), identical across an instance's candidates. */
  prefixChars: number;
}
