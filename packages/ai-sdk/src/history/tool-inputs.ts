// The inputs of the history tools. A model writes them, so they are hostile data: each is checked
// here (the AI SDK runs the check before `execute`, and a failed check goes back to the model as
// a tool error it can correct), every string and number bounded, unknown keys refused.
import { MAX_IDENTIFIER_LENGTH } from '@ctxgraph/fragments-core';
import { type FlexibleSchema, jsonSchema } from 'ai';

/** Where `searchHistory` looks. */
export type HistoryScope = 'branch' | 'chat' | 'user';

/** Input of the `searchHistory` tool. */
export interface SearchHistoryInput {
  /** The words to find (every word must match). */
  readonly query: string;
  /** `'branch'`: the branch of this conversation; `'chat'`: every branch of the chat; `'user'`: every chat of the user. */
  readonly scope: HistoryScope;
  /** Another chat of the user (scopes `'branch'` and `'chat'`). */
  readonly chatId?: string;
  /** Another branch of the chat (scope `'branch'`). */
  readonly branch?: string;
  /** Hits per page, 1 to 20. */
  readonly limit?: number;
  /** `nextCursor` of the previous page of the same search. */
  readonly cursor?: string;
}

/** Input of the `listBranches` tool. */
export interface ListBranchesInput {
  /** Another chat of the user. */
  readonly chatId?: string;
  /** How many branches, most recently updated first, 1 to 50. */
  readonly limit?: number;
}

/** Input of the `readBranch` tool. */
export interface ReadBranchInput {
  /** Another chat of the user. */
  readonly chatId?: string;
  /** The branch to read back from its newest message. */
  readonly branch?: string;
  /** A message (its `node` id) to read back from, itself included, in place of a branch's newest. */
  readonly end?: string;
  /** How many messages, 1 to 50. */
  readonly limit?: number;
}

/** The bounds of the tools' inputs. */
const HISTORY_INPUT_LIMITS: {
  readonly searchHits: number;
  readonly branches: number;
  readonly messages: number;
  readonly cursorCharacters: number;
  readonly queryCharacters: number;
} = {
  searchHits: 20,
  branches: 50,
  messages: 50,
  cursorCharacters: 2_000,
  // The stores' own bound on a query (the store kit's SEARCH_QUERY_LIMITS).
  queryCharacters: 1_000,
};

type Field =
  | { readonly kind: 'string'; readonly maxLength: number; readonly description: string }
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly description: string }
  | { readonly kind: 'integer'; readonly max: number; readonly description: string };

/** A tool's fields: the JSON Schema the model sees and the check its input gets are made from them. */
type Fields = Readonly<Record<string, Field & { readonly required?: boolean }>>;

const identifierField = (description: string): Field => ({
  kind: 'string',
  maxLength: MAX_IDENTIFIER_LENGTH,
  description,
});

const SEARCH_FIELDS: Fields = {
  query: {
    kind: 'string',
    maxLength: HISTORY_INPUT_LIMITS.queryCharacters,
    description: 'The words to find; a message matches when it contains every word.',
    required: true,
  },
  scope: {
    kind: 'enum',
    values: ['branch', 'chat', 'user'],
    description:
      "'branch': this conversation's branch (including messages a summary replaced); 'chat': every branch of the chat; 'user': every chat of the user.",
    required: true,
  },
  chatId: identifierField("Another chat of the user (scope 'branch' or 'chat'); default this one."),
  branch: identifierField("Another branch of the chat (scope 'branch')."),
  limit: { kind: 'integer', max: HISTORY_INPUT_LIMITS.searchHits, description: 'Hits, 1 to 20.' },
  cursor: {
    kind: 'string',
    maxLength: HISTORY_INPUT_LIMITS.cursorCharacters,
    description: 'nextCursor of the previous page of the same search.',
  },
};

const LIST_FIELDS: Fields = {
  chatId: identifierField('Another chat of the user; default this one.'),
  limit: {
    kind: 'integer',
    max: HISTORY_INPUT_LIMITS.branches,
    description: 'Branches, most recently updated first, 1 to 50.',
  },
};

const READ_FIELDS: Fields = {
  chatId: identifierField('Another chat of the user; default this one.'),
  branch: identifierField(
    "The branch to read back from its newest message; default this conversation's branch.",
  ),
  end: identifierField(
    'A message node id to read back from (itself included): a search hit, or `older` of a previous read.',
  ),
  limit: {
    kind: 'integer',
    max: HISTORY_INPUT_LIMITS.messages,
    description: 'Messages, 1 to 50.',
  },
};

function schemaOf(fields: Fields): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(fields)) {
    properties[name] =
      field.kind === 'string'
        ? {
            type: 'string',
            minLength: 1,
            maxLength: field.maxLength,
            description: field.description,
          }
        : field.kind === 'enum'
          ? { type: 'string', enum: [...field.values], description: field.description }
          : { type: 'integer', minimum: 1, maximum: field.max, description: field.description };
  }
  const required = Object.entries(fields)
    .filter(([, field]) => field.required === true)
    .map(([name]) => name);
  return { type: 'object', properties, required, additionalProperties: false };
}

/** What is wrong with `value` as a tool input of `fields`, or its own copy when nothing is. */
function checkFields(
  tool: string,
  fields: Fields,
  value: unknown,
): { readonly value: Record<string, unknown> } | { readonly problem: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: `${tool}: the input must be a JSON object.` };
  const input = value as Record<string, unknown>;
  const checked: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(fields, key))
      return {
        problem: `${tool}: unknown field ${JSON.stringify(key.slice(0, 40))} (allowed: ${Object.keys(fields).join(', ')}).`,
      };
  }
  for (const [name, field] of Object.entries(fields)) {
    const given = Object.hasOwn(input, name) ? input[name] : undefined;
    // A model often writes null for a field it means to leave out.
    if (given === undefined || given === null) {
      if (field.required === true) return { problem: `${tool}: ${name} is required.` };
      continue;
    }
    if (field.kind === 'integer') {
      if (typeof given !== 'number' || !Number.isInteger(given) || given < 1 || given > field.max)
        return { problem: `${tool}: ${name} must be an integer from 1 to ${field.max}.` };
    } else if (typeof given !== 'string') {
      return { problem: `${tool}: ${name} must be a string.` };
    } else if (field.kind === 'enum') {
      if (!field.values.includes(given))
        return { problem: `${tool}: ${name} must be one of ${field.values.join(', ')}.` };
    } else if (given.length === 0 || given.length > field.maxLength) {
      return { problem: `${tool}: ${name} must be 1 to ${field.maxLength} characters long.` };
    }
    checked[name] = given;
  }
  return { value: { ...checked } };
}

/**
 * The AI SDK schema of a tool's input: the JSON Schema the model is shown, and the check the SDK
 * runs on what the model wrote before `execute` (a failed check is a tool error the model sees).
 */
function inputSchema<T>(tool: string, fields: Fields): FlexibleSchema<T> {
  return jsonSchema<T>(schemaOf(fields), {
    validate: (value) => {
      const checked = checkFields(tool, fields, value);
      return 'problem' in checked
        ? { success: false, error: new TypeError(checked.problem) }
        : { success: true, value: checked.value as T };
    },
  });
}

/**
 * Checks a tool's input again inside `execute` (a tool may be called without the SDK's check:
 * `tool.execute(input)` by hand); the problem, or the input.
 */
export function recheck<T>(
  tool: string,
  fields: Fields,
  value: unknown,
): { readonly value: T } | { readonly problem: string } {
  const checked = checkFields(tool, fields, value);
  return 'problem' in checked ? checked : { value: checked.value as T };
}

/** The three tools' input schemas and fields. */
export const historyInputs: {
  readonly searchHistory: {
    readonly schema: FlexibleSchema<SearchHistoryInput>;
    readonly fields: Fields;
  };
  readonly listBranches: {
    readonly schema: FlexibleSchema<ListBranchesInput>;
    readonly fields: Fields;
  };
  readonly readBranch: {
    readonly schema: FlexibleSchema<ReadBranchInput>;
    readonly fields: Fields;
  };
} = {
  searchHistory: {
    schema: inputSchema<SearchHistoryInput>('searchHistory', SEARCH_FIELDS),
    fields: SEARCH_FIELDS,
  },
  listBranches: {
    schema: inputSchema<ListBranchesInput>('listBranches', LIST_FIELDS),
    fields: LIST_FIELDS,
  },
  readBranch: {
    schema: inputSchema<ReadBranchInput>('readBranch', READ_FIELDS),
    fields: READ_FIELDS,
  },
};
