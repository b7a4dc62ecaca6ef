"""Amazon Bedrock provider for llmplex: the Converse API on boto3 (entry point ``bedrock``)."""
