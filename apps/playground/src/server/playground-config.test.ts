import { describe, expect, it } from 'vitest';
import { DEFAULT_SQLITE_PATH, readPlaygroundConfig } from './playground-config';

describe('readPlaygroundConfig', () => {
  it('defaults to SQLite in data/, port 5173, no model, demo-user', () => {
    const config = readPlaygroundConfig({});
    expect(config).toEqual({
      port: 5173,
      host: '127.0.0.1',
      store: { kind: 'sqlite', path: DEFAULT_SQLITE_PATH },
      model: null,
      defaultUserId: 'demo-user',
    });
    expect(DEFAULT_SQLITE_PATH.endsWith('apps/playground/data/playground.db')).toBe(true);
  });

  it('picks Postgres when DATABASE_URL is set, memory when asked', () => {
    expect(readPlaygroundConfig({ DATABASE_URL: 'postgres://x/y' }).store).toEqual({
      kind: 'postgres',
      url: 'postgres://x/y',
    });
    expect(readPlaygroundConfig({ DATABASE_URL: 'postgres://x/y', STORE: 'memory' }).store).toEqual(
      { kind: 'memory' },
    );
    expect(readPlaygroundConfig({ STORE: 'sqlite', SQLITE_PATH: '/tmp/a.db' }).store).toEqual({
      kind: 'sqlite',
      path: '/tmp/a.db',
    });
  });

  it('configures a model from an API key or an OpenAI-compatible base URL', () => {
    expect(readPlaygroundConfig({ OPENAI_API_KEY: 'sk-test' }).model).toEqual({
      modelId: 'gpt-4o-mini',
      apiKey: 'sk-test',
      baseURL: undefined,
    });
    expect(
      readPlaygroundConfig({
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        OPENAI_MODEL: 'llama3.2',
      }).model,
    ).toEqual({ modelId: 'llama3.2', apiKey: 'not-needed', baseURL: 'http://127.0.0.1:11434/v1' });
  });

  it('configures the offline echo model with PLAYGROUND_MODEL=echo, even beside a key', () => {
    const echo = { modelId: 'echo', apiKey: '', baseURL: undefined, kind: 'echo' };
    expect(readPlaygroundConfig({ PLAYGROUND_MODEL: 'echo' }).model).toEqual(echo);
    expect(readPlaygroundConfig({ PLAYGROUND_MODEL: ' ECHO ', OPENAI_API_KEY: 'k' }).model).toEqual(
      echo,
    );
    expect(readPlaygroundConfig({ PLAYGROUND_MODEL: 'openai', OPENAI_API_KEY: 'k' }).model).toEqual(
      { modelId: 'gpt-4o-mini', apiKey: 'k', baseURL: undefined },
    );
    expect(() => readPlaygroundConfig({ PLAYGROUND_MODEL: 'gpt-5' })).toThrow(
      'PLAYGROUND_MODEL must be echo or openai, received "gpt-5".',
    );
  });

  it('refuses a bad port, an unknown store and Postgres without a URL', () => {
    expect(() => readPlaygroundConfig({ PORT: 'eighty' })).toThrow('PORT must be a whole number');
    expect(() => readPlaygroundConfig({ PORT: '70000' })).toThrow('PORT');
    expect(() => readPlaygroundConfig({ STORE: 'redis' })).toThrow(
      'STORE must be sqlite, memory or postgres',
    );
    expect(() => readPlaygroundConfig({ STORE: 'postgres' })).toThrow('DATABASE_URL');
  });
});
