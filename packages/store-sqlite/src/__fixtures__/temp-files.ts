import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir, and a way to make file paths in it and remove it. */
export interface TempDirectory {
  readonly path: string;
  readonly file: (name?: string) => string;
  readonly remove: () => void;
}

let files = 0;

/** Creates a temp directory for one test file's databases. */
export function tempDirectory(label: string): TempDirectory {
  const path = mkdtempSync(join(tmpdir(), `ctxgraph-sqlite-${label}-`));
  return {
    path,
    file: (name) => {
      files += 1;
      return join(path, name ?? `store-${files}.db`);
    },
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A one-text-part message. */
export function textMessage(
  id: string,
  text = `text of ${id}`,
  role = 'user',
): { id: string; role: string; parts: { type: string; text: string }[] } {
  return { id, role, parts: [{ type: 'text', text }] };
}
