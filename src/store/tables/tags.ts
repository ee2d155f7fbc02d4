/** Team tag manager: versions of a team's tag graph and the per-environment release pointers. */
export interface TagTables {
  tag_versions: {
    id: string;
    team_id: string;
    /** draft | submitted | approved | published | abandoned */
    status: string;
    base_version_id: string | null;
    /** The tag graph as compact JSON. */
    graph: string;
    /** Starts at 1, +1 per successful graph replace (compare-and-set in the UPDATE). */
    graph_revision: number | string;
    tag_count: number;
    trigger_count: number;
    variable_count: number;
    created_by: string | null;
    created_at: string;
    updated_at: string;
    submitted_at: string | null;
    submitted_by: string | null;
    approved_at: string | null;
    approved_by: string | null;
    published_at: string | null;
    published_by: string | null;
    abandoned_at: string | null;
  };
  tag_releases: {
    team_id: string;
    /** production | preview | development */
    environment: string;
    version_id: string;
    updated_at: string;
    updated_by: string | null;
  };
}
