import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { AttachmentRecord, DecisionRecord, FeedbackRecord, ReviewRecord } from '../domain/reviews/records';

/** A review row as stored: times in epoch milliseconds, metadata as JSON text. */
export type ReviewRow = Omit<ReviewRecord, 'metadata' | 'created_at' | 'updated_at' | 'decided_at' | 'expires_at' | 'waiting_until' | 'decision' | 'workflow' | 'links'> & {
  metadata: string;
  created_at: number;
  updated_at: number;
  decided_at: number | null;
  expires_at: number | null;
};

export type DecisionRow = Omit<DecisionRecord, 'created_at'> & {
  organization_id: number | null;
  created_at: number;
};

export type FeedbackRow = Omit<FeedbackRecord, 'created_at'> & {
  organization_id: number | null;
  created_at: number;
};

export type AttachmentRow = Omit<AttachmentRecord, 'created_at'> & {
  organization_id: number | null;
  storage_key: string;
  created_at: number;
};

type Creation<Row> = Omit<Row, 'id'>;

export interface Models {
  Review: ModelStatic<Model<ReviewRow, Creation<ReviewRow>>>;
  Decision: ModelStatic<Model<DecisionRow, Creation<DecisionRow>>>;
  Feedback: ModelStatic<Model<FeedbackRow, Creation<FeedbackRow>>>;
  Attachment: ModelStatic<Model<AttachmentRow, Creation<AttachmentRow>>>;
}

/** Model definitions mirror the migrations; the migrations own the schema. */
export function defineModels(sequelize: Sequelize): Models {
  const Review = sequelize.define<Model<ReviewRow, Creation<ReviewRow>>>('reviews', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: DataTypes.INTEGER,
    agent_id: DataTypes.INTEGER,
    agent_name: DataTypes.STRING(255),
    task_type: { type: DataTypes.STRING(255), allowNull: false },
    proposed_action: { type: DataTypes.TEXT, allowNull: false },
    agent_reasoning: DataTypes.TEXT,
    confidence_score: DataTypes.DOUBLE,
    urgency: { type: DataTypes.STRING(16), allowNull: false },
    framework: DataTypes.STRING(255),
    metadata: { type: DataTypes.TEXT, allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    assigned_to: DataTypes.STRING(255),
    assigned_team: DataTypes.STRING(255),
    routing_rule: DataTypes.STRING(255),
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
    decided_at: DataTypes.BIGINT,
    expires_at: DataTypes.BIGINT,
  });
  const Decision = sequelize.define<Model<DecisionRow, Creation<DecisionRow>>>('decisions', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: { type: DataTypes.INTEGER, allowNull: false },
    organization_id: DataTypes.INTEGER,
    decision_type: { type: DataTypes.STRING(16), allowNull: false },
    reviewer_id: DataTypes.INTEGER,
    reviewer_name: DataTypes.STRING(255),
    modified_action: DataTypes.TEXT,
    notes: DataTypes.TEXT,
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    receipt: DataTypes.TEXT,
  });
  const Feedback = sequelize.define<Model<FeedbackRow, Creation<FeedbackRow>>>('feedback', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: { type: DataTypes.INTEGER, allowNull: false },
    organization_id: DataTypes.INTEGER,
    rating: DataTypes.INTEGER,
    comment: DataTypes.TEXT,
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  const Attachment = sequelize.define<Model<AttachmentRow, Creation<AttachmentRow>>>('attachments', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: { type: DataTypes.INTEGER, allowNull: false },
    organization_id: DataTypes.INTEGER,
    file_name: { type: DataTypes.STRING(255), allowNull: false },
    content_type: { type: DataTypes.STRING(255), allowNull: false },
    size_bytes: { type: DataTypes.BIGINT, allowNull: false },
    sha256: { type: DataTypes.STRING(64), allowNull: false },
    description: DataTypes.TEXT,
    storage_key: { type: DataTypes.STRING(255), allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  Review.hasOne(Decision, { as: 'decision', foreignKey: 'review_id' });
  return { Review, Decision, Feedback, Attachment };
}
