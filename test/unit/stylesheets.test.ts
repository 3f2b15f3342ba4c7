import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const RENDERER = path.resolve(__dirname, '..', '..', 'renderer', 'src');

/**
 * A rule left open (a merge that dropped its `}`) does not fail the build: the bundler reads
 * every later rule as nested inside it, and they silently stop applying (the diff colours did).
 */
describe("the dashboard's stylesheets", () => {
  const sheets = fs.readdirSync(RENDERER).filter((name) => name.endsWith('.css'));

  it.each(sheets)('%s closes every rule it opens', (name) => {
    const text = fs
      .readFileSync(path.join(RENDERER, name), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/'[^'\n]*'|"[^"\n]*"/g, '');
    let depth = 0;
    const unbalanced: number[] = [];
    for (const [index, line] of text.split('\n').entries()) {
      for (const character of line) {
        if (character === '{') depth += 1;
        if (character === '}') depth -= 1;
        if (depth < 0) unbalanced.push(index + 1);
      }
    }
    expect({ depth, unbalanced }).toEqual({ depth: 0, unbalanced: [] });
  });
});
