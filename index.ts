/**
 * subagent-inprocess: in-process subagents for agent hosts on cordis. Every plugin, public type
 * and error is re-exported here (SPEC §7).
 */

// first: fail on an unsupported cordis before anything uses it
import './cordis-glue/peer.ts'

export {
  type AgentDefinition,
  AgentDefinitionError,
  type AgentDefinitionProblem,
  AgentDefinitions,
  type AgentDefinitionsService,
  formatProblem as formatAgentDefinitionProblem,
  unknownDefinitionMessage,
} from './plugins/agent-definitions/index.ts'
export { Approvals, DECIDED_EVENT, DELEGATION_POLICY_SECTION, REQUESTED_EVENT } from './plugins/approvals/index.ts'
export type { ApprovalAnswer, ApprovalDecision, ApprovalRequest, DecidedBy } from './plugins/approvals/index.ts'
export {
  approvalPolicyProblems,
  decideByPolicy,
  mergeStrictest,
  readApprovalPolicy,
} from './lib/approval/policy.ts'
export { CodeMode } from './plugins/code-mode/index.ts'
export { DepthPolicy } from './plugins/depth-policy/index.ts'
export { Agents, Host, Models, Sessions, SystemPrompt, Tools } from './plugins/host/index.ts'
export type { AssembledPrompt, CreateOptions, PreStepDecision, StoredSession } from './plugins/host/index.ts'
export { abortedBeforePublication, InProcessRun } from './plugins/inprocess-run/index.ts'
export { ContentFilterError, ModelRequestError, OpenAIModel } from './plugins/openai-model/index.ts'
export type { OpenAIAdapterOptions } from './plugins/openai-model/index.ts'
export { exhaustedMessage, ScriptedModel } from './plugins/scripted-model/index.ts'
export type { ScriptedResponse, ScriptedToolCall, ScriptEntry } from './plugins/scripted-model/index.ts'
export { SessionFileError, SessionFiles } from './plugins/session-files/index.ts'
export { SessionPostgres, SessionStoreError, TreeLeasedError } from './plugins/session-postgres/index.ts'
export { PeerDependencyError, SUPPORTED_CORDIS } from './lib/peer-dependency.ts'
export { StructuredOutput } from './plugins/structured-output/index.ts'
export { backgroundSettled, SubagentTool } from './plugins/subagent-tool/index.ts'
export type { BackgroundRunInfo, SubagentToolService } from './plugins/subagent-tool/index.ts'
export {
  BACKGROUND_DELIVERED_EVENT,
  BACKGROUND_START_EVENT,
  interruptedBackgroundRuns,
} from './lib/delegation/background-record.ts'
export { McpCallError, McpTools } from './plugins/mcp-tools/index.ts'
export type { HttpServer, ServerConfig, StdioServer } from './plugins/mcp-tools/index.ts'
export { TreeBudget } from './plugins/tree-budget/index.ts'
export type { BudgetRemaining } from './lib/delegation/tree-budget.ts'
export { spanAttributes, Tracing, tracingFailedMessage } from './plugins/tracing/index.ts'
export { Inspector, type InspectorSource, InspectorServer, readSavedSessions } from './plugins/inspector/index.ts'
export type { AgentView } from './lib/session/agent-view.ts'

export {
  AgentDisposedError,
  SubagentBudgetError,
  SubagentDepthError,
  SubagentError,
  UnsupportedCapabilityError,
  UnsupportedSchemaError,
} from './lib/errors.ts'
export type { ErrorCode } from './lib/errors.ts'
export type { Diagnostic, DiagnosticKey, DiagnosticParams } from './lib/text/diagnostic.ts'
export type * from './lib/types.ts'
export { buildSessionTree, type SessionTreeNode } from './lib/delegation/session-tree.ts'
export { isEvent, isKnownEvent } from './lib/session/session-event.ts'
export type { JsonSchemaType, OutputSchema, StructuredOf } from './lib/schema/structured-type.ts'
export { subsetOfSchemastery } from './lib/schema/schemastery-subset.ts'
export {
  type PrintTranscriptOptions,
  printTranscript,
  Transcript,
  type TranscriptOptions,
  type TranscriptOutput,
  TranscriptPrinter,
  type Verbosity,
} from './plugins/transcript/index.ts'
export { type ApprovalPromptOptions, attachApprovalPrompt, NON_INTERACTIVE_TIMEOUT_MS } from './bin/approval-prompt.ts'
