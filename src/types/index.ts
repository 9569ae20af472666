export * from './task.js';
export * from './trajectory.js';
export * from './score.js';
export * from './verify.js';
export * from './selection.js';
export * from './checks.js';
export * from './selector.js';
export * from './judge.js';
