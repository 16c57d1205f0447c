#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/pinecrest/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["pinecrest/deposit-rate-sheet"] = (
    "Consumer deposit rate sheet",
    "Pinecrest Community Credit Union - Consumer Deposit Rate Sheet - effective 03/02/2026",
    """
# Consumer Deposit Rate Sheet
Savings, checking and Money Market accounts for personal members.
Rates effective March 2, 2026, and may change after the account is opened.

1. SAVINGS AND CHECKING
Account                  Minimum to open    Dividend rate    APY*
Primary Savings          USD 5.00           0.10%            0.10%
Holiday Club Savings     USD 0.00           0.50%            0.50%
Youth Savings            USD 5.00           2.00%            2.02%
  (ages 13-17; rate paid on the first USD 1,000.00, 0.10% above it)
Free Checking            USD 25.00          none             none
Premier Checking         USD 25.00          0.25%            0.25%
  (rate paid on balances of USD 10,000.00 or more)
IRA Savings              USD 0.00           1.00%            1.00%

2. MONEY MARKET (TIERED)
The whole balance earns the rate of the tier it falls in.

Balance tier                        Dividend rate    APY*
USD 2,500.00 to USD 24,999.99       0.75%            0.75%
USD 25,000.00 to USD 99,999.99      1.49%            1.50%
USD 100,000.00 to USD 249,999.99    2.47%            2.50%
USD 250,000.00 and over             2.96%            3.00%
Below USD 2,500.00                  0.05%            0.05%

A monthly fee of USD 10.00 applies to Money Market accounts if the
average daily balance for the month is below USD 2,500.00. Money
Market accounts allow 6 free withdrawals or transfers each month;
after that there is a charge of USD 3.00 for each one.
<<PAGE>>
3. HOW DIVIDENDS ARE PAID
* APY = Annual Percentage Yield. Rates shown are the dividend rates
  declared by the Board of Directors for the current dividend period.

Dividends on all accounts on this sheet are compounded daily and cred-
ited monthly, on the last day of the month. We use the daily balance
method: we apply a daily periodic rate to the full amount in the
account each day. Dividends begin to accrue on the business day you
deposit noncash items (for example, checks).

Holiday Club Savings pays out its full balance to your checking or
Primary Savings account on November 1 each year. A withdrawal before
then closes the Holiday Club account.

4. SHARE CERTIFICATES
Certificate rates are on the Share certificates page of our Help
Center and on the certificate rate sheet available in every branch.

5. INSURANCE AND OTHER TERMS
Your savings are federally insured to at least USD 250,000.00 and
backed by the full faith and credit of the United States Government,
National Credit Union Administration, a U.S. Government Agency.
Fees could reduce earnings on the account. See the Schedule of fees and
service charges and the Membership and Account Agreement for the
other terms that apply to these accounts.

Questions? Call 1-800-555-0162 or visit any branch.
""",
)

DOCS["kinetica/personal-training-price-guide"] = (
    "Personal training and Reformer price guide",
    "Kinetica Fitness - Personal training and Reformer Pilates price guide - 1 Feb 2026",
    """
# Personal training price guide
Personal training, Reformer Pilates and extra services at all
Kinetica clubs. Prices in Australian dollars (AUD), including GST.
In force from 1 February 2026.

1. PERSONAL TRAINING (PT) SESSIONS
Session                 Single session    Pack of 5      Pack of 10
30 minutes              AUD 55            AUD 260        AUD 495
45 minutes              AUD 70            AUD 330        AUD 630
60 minutes              AUD 85            AUD 400        AUD 765
Partner PT, 45 min**    AUD 95            AUD 450        AUD 855
** Price for two people training together, not per person.

Packs must be used within 6 months of purchase (5-session packs) or
9 months (10-session packs). Unused sessions are not refunded, but
you can transfer them to another member once.

2. CANCELLING A PT SESSION
Please give your trainer at least 24 hours' notice to move or cancel
a session. Sessions cancelled with less notice, or missed, are used up.
If your trainer cancels, you get the session back plus one free
30-minute session for every 3 sessions they cancel.
<<PAGE>>
3. REFORMER PILATES AND SPECIALTY CLASSES
Item                                 Members      Non-members
Reformer Intro (1 session)           Free         AUD 25
Reformer Pilates class               AUD 12       AUD 30
Reformer 10-class pack               AUD 100      not available
Mobility and recovery class          Included     AUD 18

Reformer 10-class packs expire 4 months after purchase.

4. OTHER SERVICES
Service                              Price
Body composition scan                AUD 20 (first scan free)
Nutrition consult, 45 minutes        AUD 90
Program review with a coach          AUD 35
Towel service                        AUD 3 per visit
Locker hire, per month               AUD 15

Nutrition consults are run by accredited practising dietitians and
may be claimable from your private health fund's extras cover. Ask
your fund before you book. Some trainers work as independent con-
tractors and may set lower prices for their own packs.

5. HOW TO BOOK
Book PT and services in the Kinetica app under Book > Coaching, or at
reception during staffed hours. Payment is taken when you book.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "pinecrest make_pdfs.py")


if __name__ == "__main__":
    main()
