#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/kestrel/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["kestrel/credit-card-disclosure"] = (
    "Kestrel Visa credit cards: rates and fees disclosure",
    "Kestrel Credit Union - Visa Platinum and Visa Cash Rewards - Rates and Fees - March 2026",
    """
# Kestrel Visa Credit Cards: Rates and Fees
Kestrel Visa Platinum and Kestrel Visa Cash Rewards.
Effective March 2, 2026. Your APR is based on your credit history.

INTEREST RATES AND INTEREST CHARGES
                                  Visa Platinum         Visa Cash Rewards
Annual Percentage Rate (APR)      13.99% to 17.99%      17.99% to 24.99%
for purchases
APR for balance transfers         0% intro APR for      Same as purchase APR
                                  12 months*
APR for cash advances             19.99%                19.99%
Penalty APR                       None                  None
* After the intro period, the purchase APR applies. The intro APR applies
  to balance transfers made within 90 days of opening the account.

Paying interest: your due date is at least 25 days after the close of each
billing cycle. We will not charge you interest on purchases if you pay
your entire balance by the due date each month. We start charging interest
on cash advances and balance transfers on the transaction date.

Minimum interest charge: none.

FEES
Annual fee                        None
Balance transfer fee              3% of each transfer (minimum $5)
Cash advance fee                  3% of each cash advance (minimum $10)
Foreign transaction fee           1% of each transaction in US dollars
Late payment fee                  Up to $25
Returned payment fee              Up to $25
Over-the-credit-limit fee         None
<<PAGE>>
HOW WE CALCULATE YOUR BALANCE
We use a method called "average daily balance (including new purchases)".

MINIMUM PAYMENT
Your minimum payment is 2% of your new balance or $25, whichever is
greater, plus any amount past due. If your balance is less than $25, you
must pay the full balance.

CREDIT LIMITS
The minimum credit limit is $500. Visa Cash Rewards accounts start at
$2,000. You may ask for a credit limit increase after 6 months, and no
more often than once every 6 months.

CASH REWARDS
Visa Cash Rewards earns 1.5% cash back on all purchases. Cash back is not
earned on balance transfers, cash advances or fees. Rewards are credited
to your card balance or a Kestrel savings account once a quarter, when
they reach $25 or more. Rewards expire if your account is closed or is
more than 60 days past due.

OTHER FEATURES
Both cards include Visa Zero Liability, cell phone protection of up to
$600 a claim when you pay your monthly phone bill with the card (2 claims
a year, $50 deductible), and free access to your credit score in online
banking.

To dispute a charge, follow the steps in our help center or call
1-800-555-0177. Kestrel Credit Union is federally insured by the NCUA.
Loans are subject to credit ap-
proval. See the Credit Card Agreement for full terms.
""",
)

DOCS["brightwell/it-charges-2026"] = (
    "IT Services charges 2026",
    "Brightwell University IT Services - Schedule of charges 2026 - approved 18 December 2025",
    """
# IT Services: schedule of charges 2026
Applies from 1 January 2026 to 31 December 2026. Prices are in
Australian dollars and include GST unless marked "ex GST".

1. SECURITY KEYS AND CARDS
Item                                      Price
FIDO2 security key (students)             $35
Replacement security key (staff, lost)    $35
Replacement student card                  $20
Replacement staff card                    Free (first), then $20

Security keys are sold at the walk-in Service Desks by card payment only.
Faulty keys are replaced free within 12 months of purchase.

2. PRINT HUB: POSTERS AND 3D PRINTING
Item                                      Price
A2 poster, colour, paper                  $12
A1 poster, colour, paper                  $18
A0 poster, colour, paper                  $28
A0 poster, colour, fabric                 $45
Lamination, A3 and smaller                $2 per sheet
3D printing (PLA)                         20c per gram, minimum $3

Poster jobs submitted by 12 pm are ready by 4 pm the next working day.
Print Hub is on Level 2 of the Library, Northbank campus.
<<PAGE>>
3. RESEARCH COMPUTING
Item                                      Price
Research Data Store, beyond 5 TB          $110 per TB per year (ex GST)
High-performance computing (HPC)          Free up to 50,000 core hours
                                          a year per project
HPC above the free allocation             3c per core hour (ex GST)
Virtual server (2 CPU, 8 GB RAM)          $38 per month (ex GST)

Research charges are billed to the project's cost centre each quarter. A
project can ask for a one-off free increase for a grant application.

4. STAFF EQUIPMENT AND SERVICES
Item                                      Price (ex GST)
Standard staff laptop (4-year lease)      $42 per month
Extra monitor                             $240
Conference room booking system licence    $180 per room per year
Mobile phone plan, staff                  $25 per month

Staff equipment is charged to the requesting cost centre. Equip-
ment bought outside IT Services is not supported by the Service Desk.

5. LOAN LAPTOPS
Charges for late returns and lost loan laptops are set out on the
Borrowing a laptop page of the knowledge base.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "kestrel make_pdfs.py")


if __name__ == "__main__":
    main()
