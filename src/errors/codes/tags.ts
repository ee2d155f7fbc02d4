import type { CodeTable } from '../catalog.ts';

/** Team tag manager: tag versions, their graphs and releases. */
export const tagCodes = {
  version_closed: {
    status: 409,
    summary:
      'The tag version is no longer a draft (submitted, approved, published or abandoned), so its graph can’t change; create a new draft from it.',
    suggestions: ['Create a new draft with `baseVersionId` set to this version and edit that one.'],
  },
  tag_version_transition_invalid: {
    status: 409,
    summary:
      'The tag version is not in a state this step accepts (submit needs a draft, approve a submitted version, publish an approved or published one).',
  },
  tag_graph_too_large: {
    status: 413,
    summary: 'The tag graph is larger than 262,144 bytes as compact UTF-8 JSON.',
  },
  tag_graph_too_many_tags: { status: 400, summary: 'A tag graph holds at most 256 tags.' },
  tag_graph_too_many_triggers: { status: 400, summary: 'A tag graph holds at most 256 triggers.' },
  tag_graph_too_many_variables: { status: 400, summary: 'A tag graph holds at most 256 variables.' },
  tag_graph_too_many_system_modules: {
    status: 400,
    summary: 'A tag graph holds at most 64 system modules.',
  },
  tag_graph_array_too_long: {
    status: 400,
    summary: 'An array nested inside the tag graph has more than 256 items; `pointer` names it.',
  },
  tag_graph_too_many_keys: {
    status: 400,
    summary: 'An object inside the tag graph has more than 64 keys; `pointer` names it.',
  },
  tag_graph_string_too_long: {
    status: 400,
    summary: 'A string (or property name) in the tag graph is longer than 65,536 UTF-8 bytes.',
  },
  tag_graph_too_deep: {
    status: 400,
    summary: 'The tag graph nests objects and arrays more than 16 levels deep (the graph itself is level 1).',
  },
  tag_graph_invalid: {
    status: 400,
    summary:
      'An item of the tag graph breaks a rule of its shape (ids, types, consent category, trigger references, URLs); `pointer` names it.',
  },
} satisfies CodeTable;
