import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../src/util/render-template.js';

describe('renderTemplate', () => {
  it('fills every placeholder, spaces inside the braces allowed, the rest of the text as it is', () => {
    expect(renderTemplate('a {{x}} b {{ y }} c {{x}}', { x: 1, y: 'two' })).toBe('a 1 b two c 1');
    expect(renderTemplate('{{x}}', { x: '' })).toBe('');
    expect(renderTemplate('no placeholders', {})).toBe('no placeholders');
    expect(renderTemplate('', {})).toBe('');
  });

  it('inserts values literally: no $-patterns, no second rendering of braces in a value', () => {
    expect(renderTemplate('[{{v}}]', { v: "$& $1 $$ $` $'" })).toBe("[$& $1 $$ $` $']");
    expect(renderTemplate('{{v}}{{w}}', { v: '{{w}}', w: 'W' })).toBe('{{w}}W');
  });

  it('leaves what is not a placeholder alone', () => {
    expect(renderTemplate('{{1x}} {x} {{ x y }} {{x', { x: 'X' })).toBe('{{1x}} {x} {{ x y }} {{x');
  });

  it('names the template and the first variable that has no value', () => {
    expect(() => renderTemplate('{{a}} {{b}}', { a: 1 }, 'prompt.step')).toThrow(/prompt\.step: no value for \{\{b\}\}/);
    let caught: unknown;
    try {
      renderTemplate('{{ missing }}', {}, 'where');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { template: 'where', variable: 'missing' } });
  });

  it('gives the same text on every call of a template, and for many distinct templates', () => {
    const template = 'step {{index}}: {{thought}}\n';
    for (let index = 0; index < 3; index += 1) expect(renderTemplate(template, { index, thought: 't' })).toBe(`step ${index}: t\n`);
    // More distinct templates than the compiled cache holds: each still renders right.
    for (let index = 0; index < 1200; index += 1) expect(renderTemplate(`${index}:{{v}}`, { v: 'x' })).toBe(`${index}:x`);
  });
});
