import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';

/** The server URL the global setup provided. */
export function databaseUrl(): string {
  return inject('databaseUrl');
}

/** A schema name no other test or run uses. */
export function randomSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/** An admin client for a test file (checks, sabotage, dropping schemas). Close it in afterAll. */
export function adminClient(): postgres.Sql {
  return postgres(databaseUrl(), { max: 2, onnotice: () => {} });
}

/** Drops a test schema and everything in it. */
export async function dropSchema(admin: postgres.Sql, schema: string): Promise<void> {
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** A user message node for a commit. */
export function textNode(
  id: string,
  text = `text of ${id}`,
  role = 'user',
): { id: string; message: { id: string; role: string; parts: { type: 'text'; text: string }[] } } {
  return { id, message: { id, role, parts: [{ type: 'text', text }] } };
}
