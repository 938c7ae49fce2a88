//! Small GitHub REST client on octocrab with pagination, retries and readable errors.
