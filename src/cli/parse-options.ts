/** Parsers for numeric flags: a bad value is a usage error naming the flag, not a stack trace. */
import { InvalidArgumentError } from 'commander';

export const positiveNumber = (value: string): number => {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('must be a positive number');
  return number;
};

export const positiveInt = (value: string): number => {
  const number = positiveNumber(value);
  if (!Number.isInteger(number)) throw new InvalidArgumentError('must be a positive integer');
  return number;
};

export const port = (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('must be a port number (0–65535)');
  return number;
};

/** A share in [0, 1). */
export const fraction = (value: string): number => {
  const number = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || number >= 1) throw new InvalidArgumentError('must be a fraction in [0, 1)');
  return number;
};

/** A value-model score threshold: a number in [0, 1]. */
export const unitValue = (value: string): number => {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0 || number > 1)
    throw new InvalidArgumentError('must be a number from 0 to 1');
  return number;
};

export const nonNegativeNumber = (value: string): number => {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new InvalidArgumentError('must be a number ≥ 0');
  return number;
};

/** Where /solve's rollouts branch (`fork.at`): `setup`, `first-edit` or a step number. */
export const forkPoint = (value: string): 'setup' | 'first-edit' | number => {
  if (value === 'setup' || value === 'first-edit') return value;
  if (/^\d+$/.test(value) && Number(value) > 0) return Number(value);
  throw new InvalidArgumentError('must be setup, first-edit or a step number (a positive integer)');
};

/** A comma-separated list of positive integers (`1,16,64`). */
export const positiveIntList = (value: string): number[] => value.split(',').map((item) => positiveInt(item.trim()));

/** The flag names (`table`: option key → flag) of the options the user typed (`given`: option keys), in the table's order. */
export function flagsGiven(table: Record<string, string>, given: readonly string[]): string[] {
  return Object.keys(table)
    .filter((key) => given.includes(key))
    .map((key) => table[key]!);
}
