/**
 * A sandbox provider's `describe().limits` as one readable line for the demo's header: each limit
 * and how it is enforced, the local provider's budget over all sandboxes as a sentence
 * (src/sandbox/providers/local/limits.ts `BudgetInForce`), other nested settings as `key value`.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The budget every sandbox shares: `16384 processes (cgroup v1) and 18078 MB of memory (cgroup v1)`. */
function budgetText(budget: Record<string, unknown>): string | undefined {
  const { processes, processesBy, memoryMb, memoryBy } = budget;
  if (typeof processes !== 'number' || typeof memoryMb !== 'number') return undefined;
  const by = (mechanism: unknown) => (typeof mechanism === 'string' ? ` (${mechanism})` : '');
  return `${processes} processes${by(processesBy)} and ${memoryMb} MB of memory${by(memoryBy)}`;
}

function plainValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(plainValue).join(', ');
  if (isRecord(value))
    return Object.entries(value)
      .map(([key, inner]) => `${key} ${plainValue(inner)}`)
      .join(', ');
  return String(value);
}

export function sandboxLimitsLine(limits: unknown): string {
  if (!isRecord(limits)) return 'none';
  const parts = Object.entries(limits).map(([name, how]) => {
    if (name === 'allSandboxes' && isRecord(how)) {
      const text = budgetText(how);
      if (text) return `all sandboxes together: ${text}`;
    }
    return `${name}: ${plainValue(how)}`;
  });
  return parts.length > 0 ? parts.join('; ') : 'none';
}
