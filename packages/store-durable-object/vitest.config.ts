import { fileURLToPath } from 'node:url';
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { packageTests } from '../../tooling/vitest.base.ts';

// The tests run inside workerd (Cloudflare's runtime, through miniflare): the test worker holds
// the objects the store runs in (src/__fixtures__/test-worker.ts).
const config = packageTests();
config.plugins = [
  ...(config.plugins ?? []),
  cloudflareTest({
    main: './src/__fixtures__/test-worker.ts',
    miniflare: {
      compatibilityDate: '2026-04-01',
      compatibilityFlags: ['nodejs_compat'],
      durableObjects: {
        CHATS: { className: 'ChatObject', useSQLite: true },
        TEST_CHATS: { className: 'TestChatObject', useSQLite: true },
        OUTCOME_CHATS: { className: 'OutcomeChatObject', useSQLite: true },
        LISTED_CHATS: { className: 'ListedChatObject', useSQLite: true },
        USERS: { className: 'UserObject', useSQLite: true },
        // A class with key-value storage (declared under `new_classes`, not `new_sqlite_classes`).
        KV_OBJECTS: { className: 'KeyValueObject' },
      },
    },
  }),
];
// The README's example imports the package by its name.
config.resolve = {
  alias: {
    '@ctxgraph/store-durable-object': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
  },
};

export default config;
