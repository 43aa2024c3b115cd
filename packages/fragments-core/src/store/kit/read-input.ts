import { ValidationError } from '../../errors/errors';
import { assertIdentifier } from '../../rules/identifiers';
import type {
  FindMessageNodesInput,
  GetChainInput,
  GetHeadInput,
  GetMessageInput,
} from '../context-store';
import { assertInputObject } from './input-checks';

// The reads of heads, chains and nodes. Each prepare function reads every field once into a
// fresh object: what was checked is what the driver gets.

/** `getChain` input, checked. */
export interface PreparedGetChain {
  /** The chat id. */
  readonly chatId: string;
  /** The node to walk back from. */
  readonly headMessageId: string;
  /** Stop before this node, or undefined to walk to the root. */
  readonly until: string | undefined;
  /** The most nodes to return (a positive safe integer), or undefined for all of them. */
  readonly limit: number | undefined;
}

/** `findMessageNodes` input, checked. */
export interface PreparedFindMessageNodes {
  /** The chat id. */
  readonly chatId: string;
  /** The message id (`message.id`) to look for. */
  readonly messageId: string;
  /** The most nodes to return (1 to 100, defaulted to 20). */
  readonly limit: number;
}

/** The default and largest `limit` of `findMessageNodes`. */
export const FIND_MESSAGE_NODES_LIMITS: { readonly default: number; readonly max: number } =
  Object.freeze({ default: 20, max: 100 });

/** Checks a `getHead` input: the chat id and the branch name. */
export function prepareGetHead(input: GetHeadInput): GetHeadInput {
  const method = 'getHead(input)';
  assertInputObject(method, input);
  const { chatId, branch } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'branch', branch);
  return { chatId, branch };
}

/** Checks a `getChain` input: ids, `until`, and `limit` (omitted, or a positive safe integer). */
export function prepareGetChain(input: GetChainInput): PreparedGetChain {
  const method = 'getChain(input)';
  assertInputObject(method, input);
  const { chatId, headMessageId, until, limit } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'headMessageId', headMessageId);
  if (until !== undefined) assertIdentifier(method, 'until', until);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new ValidationError(
      `${method}: limit must be a positive safe integer, received ${String(limit)}.`,
      { issues: [{ path: 'limit', message: 'expected a positive integer' }] },
    );
  }
  return { chatId, headMessageId, until, limit };
}

/** Checks a `getMessage` input: the chat id and the node id. */
export function prepareGetMessage(input: GetMessageInput): GetMessageInput {
  const method = 'getMessage(input)';
  assertInputObject(method, input);
  const { chatId, messageId } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'messageId', messageId);
  return { chatId, messageId };
}

/** Checks a `findMessageNodes` input: ids, and `limit` (omitted, or 1 to 100), defaulted to 20. */
export function prepareFindMessageNodes(input: FindMessageNodesInput): PreparedFindMessageNodes {
  const method = 'findMessageNodes(input)';
  assertInputObject(method, input);
  const { chatId, messageId, limit = FIND_MESSAGE_NODES_LIMITS.default } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'messageId', messageId);
  const { max } = FIND_MESSAGE_NODES_LIMITS;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ValidationError(
      `${method}: limit must be an integer from 1 to ${max} or omitted, received ${String(limit)}.`,
      { issues: [{ path: 'limit', message: `expected an integer from 1 to ${max}` }] },
    );
  }
  return { chatId, messageId, limit };
}
