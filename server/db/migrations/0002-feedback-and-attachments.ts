import { DataTypes, type QueryInterface } from 'sequelize';

/** Feedback on reviews and the files attached to them (bytes live under `data_dir`). */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const reviewReference = {
    type: DataTypes.INTEGER,
    allowNull: false,
    references: { model: 'reviews', key: 'id' },
    onDelete: 'CASCADE',
  };

  await queryInterface.createTable('feedback', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: reviewReference,
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    rating: { type: DataTypes.INTEGER, allowNull: true },
    comment: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('feedback', ['review_id'], { name: 'feedback_review_id' });

  await queryInterface.createTable('attachments', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: reviewReference,
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    file_name: { type: DataTypes.STRING(255), allowNull: false },
    content_type: { type: DataTypes.STRING(255), allowNull: false },
    size_bytes: { type: DataTypes.BIGINT, allowNull: false },
    sha256: { type: DataTypes.STRING(64), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: true },
    // Path of the bytes relative to the attachments directory; never derived from file_name.
    storage_key: { type: DataTypes.STRING(255), allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('attachments', ['review_id'], { name: 'attachments_review_id' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('attachments');
  await queryInterface.dropTable('feedback');
}
