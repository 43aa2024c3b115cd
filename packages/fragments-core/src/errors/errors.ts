import { CtxGraphError, type CtxGraphErrorOptions } from './ctxgraph-error';

/** One problem found while validating input: where it is and what is wrong. */
export interface ValidationIssue {
  /** Where the problem is, as a readable path: `policies[1].rule`, `messages[0].parts`. */
  readonly path: string;
  /** What is wrong there: `expected string, received number`. */
  readonly message: string;
}

/** Options of {@link ValidationError}. */
export interface ValidationErrorOptions extends CtxGraphErrorOptions {
  /** Every problem found, each with its path. */
  issues?: readonly ValidationIssue[];
}

/**
 * Input was refused before anything was done with it: a builder got a wrong argument, a store got
 * a malformed record, serialized JSON did not match its schema. `issues` lists every problem with
 * its path.
 */
export class ValidationError extends CtxGraphError {
  static override readonly errorName: string = 'ValidationError';
  /** Every problem found, each with its path (at least one). */
  readonly issues: readonly ValidationIssue[];

  constructor(message: string, options: ValidationErrorOptions = {}) {
    super(message, options);
    this.issues = options.issues ?? [{ path: '', message }];
  }
}

/** Something that was asked for does not exist. Subclasses say what kind of thing. */
export class NotFoundError extends CtxGraphError {
  static override readonly errorName: string = 'NotFoundError';
}

/** No chat with this id exists in the store. */
export class ChatNotFoundError extends NotFoundError {
  static override readonly errorName: string = 'ChatNotFoundError';
  /** The chat id that was looked up. */
  readonly chatId: string;

  constructor(chatId: string, options: CtxGraphErrorOptions = {}) {
    super(`Chat "${chatId}" does not exist.`, options);
    this.chatId = chatId;
  }
}

/** No message with this id exists in the chat. */
export class MessageNotFoundError extends NotFoundError {
  static override readonly errorName: string = 'MessageNotFoundError';
  /** The chat that was searched. */
  readonly chatId: string;
  /** The message id that was looked up. */
  readonly messageId: string;

  constructor(chatId: string, messageId: string, options: CtxGraphErrorOptions = {}) {
    super(`Message "${messageId}" does not exist in chat "${chatId}".`, options);
    this.chatId = chatId;
    this.messageId = messageId;
  }
}

/** No branch with this name exists in the chat. */
export class BranchNotFoundError extends NotFoundError {
  static override readonly errorName: string = 'BranchNotFoundError';
  /** The chat that was searched. */
  readonly chatId: string;
  /** The branch name that was looked up. */
  readonly branch: string;

  constructor(chatId: string, branch: string, options: CtxGraphErrorOptions = {}) {
    super(`Branch "${branch}" does not exist in chat "${chatId}".`, options);
    this.chatId = chatId;
    this.branch = branch;
  }
}

/** No checkpoint with this name exists in the chat. */
export class CheckpointNotFoundError extends NotFoundError {
  static override readonly errorName: string = 'CheckpointNotFoundError';
  /** The chat that was searched. */
  readonly chatId: string;
  /** The checkpoint name that was looked up. */
  readonly checkpoint: string;

  constructor(chatId: string, checkpoint: string, options: CtxGraphErrorOptions = {}) {
    super(`Checkpoint "${checkpoint}" does not exist in chat "${chatId}".`, options);
    this.chatId = chatId;
    this.checkpoint = checkpoint;
  }
}

/** A write was refused because the state it assumed has changed or the name is taken. */
export class ConflictError extends CtxGraphError {
  static override readonly errorName: string = 'ConflictError';
}

/**
 * `commit` was refused because the branch head is no longer the one the caller expected (another
 * writer got there first). Nothing was written. `currentHeadId` is the head now, so the caller can
 * re-read and retry on top of it.
 */
export class HeadConflictError extends ConflictError {
  static override readonly errorName: string = 'HeadConflictError';
  /** The chat the commit was for. */
  readonly chatId: string;
  /** The branch the commit was for. */
  readonly branch: string;
  /** The head the caller expected. */
  readonly expectedHeadId: string | null;
  /** The head the branch has now. */
  readonly currentHeadId: string | null;

  constructor(
    details: {
      chatId: string;
      branch: string;
      expectedHeadId: string | null;
      currentHeadId: string | null;
    },
    options: CtxGraphErrorOptions = {},
  ) {
    super(
      `Branch "${details.branch}" of chat "${details.chatId}" moved: expected head ${JSON.stringify(details.expectedHeadId)}, found ${JSON.stringify(details.currentHeadId)}. Nothing was written; re-read the head and retry.`,
      options,
    );
    this.chatId = details.chatId;
    this.branch = details.branch;
    this.expectedHeadId = details.expectedHeadId;
    this.currentHeadId = details.currentHeadId;
  }
}

/**
 * A commit carried a message whose id already exists in the chat but not on the branch being
 * written (on another branch's history). Replacing it would change that other branch silently,
 * so nothing was written. Message ids are unique within a chat: give the message a new id.
 */
export class MessageIdConflictError extends ConflictError {
  static override readonly errorName: string = 'MessageIdConflictError';
  /** The chat. */
  readonly chatId: string;
  /** The branch the commit was for. */
  readonly branch: string;
  /** The id that exists elsewhere in the chat. */
  readonly messageId: string;

  constructor(
    details: { chatId: string; branch: string; messageId: string },
    options: CtxGraphErrorOptions = {},
  ) {
    super(
      `Message "${details.messageId}" already exists in chat "${details.chatId}", but not on branch "${details.branch}": saving it would change another branch's history. Nothing was written; give the message a new id.`,
      options,
    );
    this.chatId = details.chatId;
    this.branch = details.branch;
    this.messageId = details.messageId;
  }
}

/**
 * `saveContext` was refused because the chat's context lane is no longer at the revision the
 * caller read (another writer saved it first). Nothing was written.
 */
export class ContextConflictError extends ConflictError {
  static override readonly errorName: string = 'ContextConflictError';
  /** The chat. */
  readonly chatId: string;
  /** The revision the caller expected. */
  readonly expectedRevision: number;
  /** The revision stored now. */
  readonly currentRevision: number;

  constructor(
    details: { chatId: string; expectedRevision: number; currentRevision: number },
    options: CtxGraphErrorOptions = {},
  ) {
    super(
      `The context of chat "${details.chatId}" is at revision ${details.currentRevision}, not ${details.expectedRevision}: another writer saved it first. Nothing was written; load it again and retry.`,
      options,
    );
    this.chatId = details.chatId;
    this.expectedRevision = details.expectedRevision;
    this.currentRevision = details.currentRevision;
  }
}

/** A branch with this name already exists in the chat. */
export class BranchExistsError extends ConflictError {
  static override readonly errorName: string = 'BranchExistsError';
  /** The chat. */
  readonly chatId: string;
  /** The name that is taken. */
  readonly branch: string;

  constructor(chatId: string, branch: string, options: CtxGraphErrorOptions = {}) {
    super(`Branch "${branch}" already exists in chat "${chatId}".`, options);
    this.chatId = chatId;
    this.branch = branch;
  }
}

/** A checkpoint with this name already exists in the chat (and replacing it was not asked for). */
export class CheckpointExistsError extends ConflictError {
  static override readonly errorName: string = 'CheckpointExistsError';
  /** The chat. */
  readonly chatId: string;
  /** The name that is taken. */
  readonly checkpoint: string;

  constructor(chatId: string, checkpoint: string, options: CtxGraphErrorOptions = {}) {
    super(
      `Checkpoint "${checkpoint}" already exists in chat "${chatId}". Delete it first or pass { replace: true } to move it.`,
      options,
    );
    this.chatId = chatId;
    this.checkpoint = checkpoint;
  }
}

/** The chat belongs to another user; nothing was read or written. */
export class OwnershipError extends CtxGraphError {
  static override readonly errorName: string = 'OwnershipError';
  /** The chat. */
  readonly chatId: string;
  /** The user who asked. */
  readonly userId: string;

  constructor(chatId: string, userId: string, options: CtxGraphErrorOptions = {}) {
    super(
      `Chat "${chatId}" belongs to another user; user "${userId}" may not open it. Nothing was read or written.`,
      options,
    );
    this.chatId = chatId;
    this.userId = userId;
  }
}

/** A store or renderer implements a specification version this code does not know. */
export class UnsupportedSpecificationError extends CtxGraphError {
  static override readonly errorName: string = 'UnsupportedSpecificationError';
}

/** Rendering failed: the fragment tree is too deep, cyclic, or holds a value no format can show. */
export class RenderError extends CtxGraphError {
  static override readonly errorName: string = 'RenderError';
}

/**
 * The store does not offer an optional ability the call needs (it does not declare it in
 * `capabilities`). Nothing was read or written.
 */
export class UnsupportedCapabilityError extends CtxGraphError {
  static override readonly errorName: string = 'UnsupportedCapabilityError';
  /** The missing ability, as named in `ContextStoreCapabilities`. */
  readonly capability: string;

  constructor(method: string, capability: string, options: CtxGraphErrorOptions = {}) {
    super(
      `${method}: the store does not support "${capability}" (capabilities.${capability} is not true). Use a store that declares it, such as the memory, SQLite or PostgreSQL store.`,
      options,
    );
    this.capability = capability;
  }
}

/** A store could not do what was asked: the database refused, the connection dropped, … */
export class StoreError extends CtxGraphError {
  static override readonly errorName: string = 'StoreError';
}

/** The database schema is missing, or newer than this store version understands. */
export class SchemaVersionError extends StoreError {
  static override readonly errorName: string = 'SchemaVersionError';
}

/** An error of the engine's own flow (no renderer given, a lazy fragment it cannot resolve, …). */
export class EngineError extends CtxGraphError {
  static override readonly errorName: string = 'EngineError';
}

/** One part of a budgeted input, as counted: a context fragment, a message, or a fixed overhead. */
export interface BudgetItem {
  /** `'fragment'` for a context fragment, `'message'` for a history or pending message. */
  readonly kind: 'fragment' | 'message';
  /** The fragment's position in the context lane (`'#3'`) or id, or the message id. */
  readonly id: string;
  /** The fragment's name (`'role'`) or the message's role (`'user'`). */
  readonly name: string;
  /** Its tokens, counted by the budget's tokenizer. */
  readonly tokens: number;
  /** Why it cannot be left out: `'required'` fragment, `'pending'` turn; null when it can. */
  readonly keptBecause: 'required' | 'pending' | null;
}

/** What a {@link BudgetExceededError} reports. */
export interface BudgetShortfall {
  /** The budget asked for. */
  readonly maxInputTokens: number;
  /** The tokens of what cannot be left out (required fragments, the pending turn, overhead). */
  readonly requiredTokens: number;
  /** The parts that cannot be left out, each counted. */
  readonly required: readonly BudgetItem[];
  /** The tokenizer that counted (`Tokenizer.id`). */
  readonly tokenizer: string;
}

/**
 * `resolve({ budget })` could not fit the input: the required fragments and the pending turn alone
 * are over `maxInputTokens`. Nothing was sent or stored; `shortfall` lists what was counted.
 */
export class BudgetExceededError extends CtxGraphError {
  static override readonly errorName: string = 'BudgetExceededError';
  /** The budget, the tokens that could not be left out, and each part of them. */
  readonly shortfall: BudgetShortfall;

  constructor(shortfall: BudgetShortfall, options: CtxGraphErrorOptions = {}) {
    const largest = shortfall.required
      .slice()
      .sort((left, right) => right.tokens - left.tokens)
      .slice(0, 3)
      .map(
        (item) =>
          `${item.kind} ${item.id} (${item.name}, ${item.tokens} tokens, ${item.keptBecause})`,
      )
      .join(', ');
    super(
      `resolve({ budget }): the parts that cannot be left out take ${shortfall.requiredTokens} tokens (${shortfall.tokenizer}), over maxInputTokens ${shortfall.maxInputTokens}. Largest: ${largest || 'none'}. Raise maxInputTokens, drop required marks, or shorten the pending message.`,
      options,
    );
    this.shortfall = shortfall;
  }
}
