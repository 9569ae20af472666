/** vitest setup file: each test file's temporary folders (test/support/temp-dir.ts) go once its tests are done. */
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir.js';

afterAll(() => removeTempDirs());
