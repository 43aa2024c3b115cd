import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const clientFolder = import.meta.dirname;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('the page', () => {
  it('imports nothing from src/server but types (Vite bundles every value import)', () => {
    const valueImports = sourceFiles(clientFolder).flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm,
        ),
      ]
        .filter((match) => match[1] === undefined && /(^|\/)server\//.test(match[2] ?? ''))
        .map((match) => `${relative(clientFolder, file)}: ${match[2]}`),
    );
    expect(valueImports).toEqual([]);
  });
});
