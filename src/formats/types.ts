/** Shared shapes of the importers: options, the issues they collect, what they return. */

/** What to do with a record that fails validation: collect it as an issue and go on, or throw. */
export type OnInvalid = 'skip' | 'fail';

/** One record that could not be imported; never dropped silently, always reported here. */
export interface ImportIssue {
  code: 'WNW_ERR_INPUT_INVALID' | 'WNW_ERR_INPUT_FORMAT';
  file: string;
  /** 1-based line of a JSONL record; absent for records inside one JSON document. */
  line?: number;
  /** Index (array) or key (object) of a record inside one JSON document. */
  record?: number | string;
  /** zod path of the first offending field, e.g. `messages[3].role`; `(json)` for unparsable text. */
  field: string;
  message: string;
}

export interface ImportResult<T> {
  items: T[];
  issues: ImportIssue[];
}

/** Options every importer takes. */
export interface ImportOptions {
  /** Overrides the source (policy or submission name) the input carries; ids become `${source}/${instance_id}`. */
  source?: string;
  /** Instance id for single-trajectory files that lack one (default: the file name up to its first dot). */
  instanceId?: string;
  /** Default `fail`: throw WNW_ERR_INPUT_INVALID at the first bad record. */
  onInvalid?: OnInvalid;
  signal?: AbortSignal;
  /**
   * Each record is handed here as it is converted instead of collected (`items` comes back
   * empty), so an input of any size is read in memory that does not grow with it.
   */
  onItem?: (item: unknown) => void;
}

/** Where a record came from, for issue reports. */
export interface RecordContext {
  file: string;
  line?: number;
  record?: number | string;
}
